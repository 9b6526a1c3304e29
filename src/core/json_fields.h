// Internal to core: JSON encoding and decoding derived from a struct's Fields() list.
// Field types: std::string, bool, std::int64_t, double, StringId, Counter, the payload enums,
// boost::json::value, std::optional<T>, std::vector<T>, and structs that have Fields().
#pragma once

#include <array>
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/event.h"

namespace agentstream::json_fields {

template <class E>
struct EnumNames;
#define AS_ENUM_NAMES(E, ...)                                                 \
  template <>                                                                 \
  struct EnumNames<E> {                                                       \
    static constexpr std::pair<E, std::string_view> kNames[] = {__VA_ARGS__}; \
  }
AS_ENUM_NAMES(TurnOrigin, {TurnOrigin::kForeground, "foreground"},
              {TurnOrigin::kAutonomous, "autonomous"});
AS_ENUM_NAMES(ToolCallStatus, {ToolCallStatus::kCompleted, "completed"},
              {ToolCallStatus::kFailed, "failed"}, {ToolCallStatus::kCanceled, "canceled"});
AS_ENUM_NAMES(PermissionDecision, {PermissionDecision::kAllow, "allow"},
              {PermissionDecision::kDeny, "deny"});
AS_ENUM_NAMES(PermissionOptionKind, {PermissionOptionKind::kAllowOnce, "allow_once"},
              {PermissionOptionKind::kAllowAlways, "allow_always"},
              {PermissionOptionKind::kRejectOnce, "reject_once"},
              {PermissionOptionKind::kRejectAlways, "reject_always"});
AS_ENUM_NAMES(PlanEntryStatus, {PlanEntryStatus::kPending, "pending"},
              {PlanEntryStatus::kInProgress, "in_progress"},
              {PlanEntryStatus::kCompleted, "completed"});
AS_ENUM_NAMES(NoticeLevel, {NoticeLevel::kInfo, "info"}, {NoticeLevel::kWarning, "warning"});
#undef AS_ENUM_NAMES

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsStringId : std::false_type {};
template <class Tag>
struct IsStringId<StringId<Tag>> : std::true_type {};
template <class T>
struct IsCounter : std::false_type {};
template <class Tag>
struct IsCounter<Counter<Tag>> : std::true_type {};
template <class T, class = void>
struct HasEnumNames : std::false_type {};
template <class T>
struct HasEnumNames<T, std::void_t<decltype(EnumNames<T>::kNames)>> : std::true_type {};

template <class T>
boost::json::value ToJson(const T& field);

class Encoder {
 public:
  explicit Encoder(boost::json::object& out) : out_(out) {}
  template <class T>
  void operator()(std::string_view name, const T& field) {
    if constexpr (IsOptional<T>::value) {
      if (field) out_[name] = ToJson(*field);
    } else {
      out_[name] = ToJson(field);
    }
  }

 private:
  boost::json::object& out_;
};

template <class T>
boost::json::value ToJson(const T& field) {
  if constexpr (std::is_same_v<T, std::string>) {
    return boost::json::string(field);
  } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t> ||
                       std::is_same_v<T, double>) {
    return field;
  } else if constexpr (std::is_same_v<T, boost::json::value>) {
    return field;
  } else if constexpr (IsStringId<T>::value) {
    return boost::json::string(field.str());
  } else if constexpr (IsCounter<T>::value) {
    return field.value();
  } else if constexpr (HasEnumNames<T>::value) {
    for (const auto& [value, name] : EnumNames<T>::kNames)
      if (value == field) return boost::json::string(name);
    return nullptr;
  } else if constexpr (IsVector<T>::value) {
    boost::json::array arr;
    arr.reserve(field.size());
    for (const auto& item : field) arr.push_back(ToJson(item));
    return arr;
  } else {
    boost::json::object obj;
    Encoder enc(obj);
    // Fields() only reads members when given an Encoder.
    const_cast<T&>(field).Fields(enc);
    return obj;
  }
}

// Decoding reports the first problem as a path ("options[1].kind") and a description.
struct DecodeError {
  std::string path;
  std::string what;
};

template <class T>
bool FromJson(const boost::json::value& json, T& out, DecodeError& err);

class Decoder {
 public:
  Decoder(const boost::json::object& in, DecodeError& err) : in_(in), err_(err) {}
  bool ok() const { return ok_; }

  template <class T>
  void operator()(std::string_view name, T& field) {
    if (!ok_) return;
    const boost::json::value* json = in_.if_contains(name);
    if constexpr (IsOptional<T>::value) {
      if (json == nullptr || json->is_null()) {
        field.reset();
        return;
      }
      field.emplace();
      ok_ = FromJson(*json, *field, err_);
    } else if constexpr (IsVector<T>::value) {
      if (json == nullptr) {
        field.clear();
        return;
      }
      ok_ = FromJson(*json, field, err_);
    } else {
      if (json == nullptr) {
        err_.what = "is missing";
        ok_ = false;
      } else {
        ok_ = FromJson(*json, field, err_);
      }
    }
    if (!ok_) {
      const bool index = !err_.path.empty() && err_.path.front() == '[';
      err_.path = std::string(name) + (err_.path.empty() || index ? "" : ".") + err_.path;
    }
  }

 private:
  const boost::json::object& in_;
  DecodeError& err_;
  bool ok_ = true;
};

inline bool Fail(DecodeError& err, std::string what) {
  err.what = std::move(what);
  return false;
}

template <class T>
bool FromJson(const boost::json::value& json, T& out, DecodeError& err) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (!json.is_string()) return Fail(err, "must be a string");
    out.assign(json.get_string().data(), json.get_string().size());
    return true;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!json.is_bool()) return Fail(err, "must be a boolean");
    out = json.get_bool();
    return true;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    if (json.is_int64())
      out = json.get_int64();
    else if (json.is_uint64() && json.get_uint64() <= INT64_MAX)
      out = static_cast<std::int64_t>(json.get_uint64());
    else
      return Fail(err, "must be an integer");
    return true;
  } else if constexpr (std::is_same_v<T, double>) {
    if (!json.is_number()) return Fail(err, "must be a number");
    out = json.to_number<double>();
    return true;
  } else if constexpr (std::is_same_v<T, boost::json::value>) {
    out = json;
    return true;
  } else if constexpr (IsStringId<T>::value) {
    if (!json.is_string() || json.get_string().empty())
      return Fail(err, "must be a non-empty string");
    out = T(std::string(json.get_string()));
    return true;
  } else if constexpr (IsCounter<T>::value) {
    if (json.is_uint64())
      out = T(json.get_uint64());
    else if (json.is_int64() && json.get_int64() >= 0)
      out = T(static_cast<std::uint64_t>(json.get_int64()));
    else
      return Fail(err, "must be a non-negative integer");
    return true;
  } else if constexpr (HasEnumNames<T>::value) {
    if (json.is_string()) {
      for (const auto& [value, name] : EnumNames<T>::kNames) {
        if (name == json.get_string()) {
          out = value;
          return true;
        }
      }
    }
    std::string names;
    for (const auto& entry : EnumNames<T>::kNames)
      names += (names.empty() ? "" : ", ") + std::string(entry.second);
    return Fail(err, "must be one of " + names);
  } else if constexpr (IsVector<T>::value) {
    if (!json.is_array()) return Fail(err, "must be an array");
    const auto& arr = json.get_array();
    out.clear();
    out.resize(arr.size());
    for (std::size_t i = 0; i < arr.size(); ++i) {
      if (!FromJson(arr[i], out[i], err)) {
        err.path = "[" + std::to_string(i) + "]" + (err.path.empty() ? "" : "." + err.path);
        return false;
      }
    }
    return true;
  } else {
    if (!json.is_object()) return Fail(err, "must be an object");
    Decoder dec(json.get_object(), err);
    out.Fields(dec);
    return dec.ok();
  }
}

}  // namespace agentstream::json_fields
