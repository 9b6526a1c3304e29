#include "net/base64.h"

#include <sodium.h>

namespace agentstream::net {

namespace {

int Variant(Base64Alphabet alphabet) {
  return alphabet == Base64Alphabet::kStandard ? sodium_base64_VARIANT_ORIGINAL
                                               : sodium_base64_VARIANT_URLSAFE_NO_PADDING;
}

}  // namespace

std::string EncodeBase64(std::string_view bytes, Base64Alphabet alphabet) {
  const int variant = Variant(alphabet);
  // The encoded length with its terminating NUL, which the result does not keep.
  std::string out(sodium_base64_encoded_len(bytes.size(), variant), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                    bytes.size(), variant);
  out.pop_back();
  return out;
}

std::optional<std::string> DecodeBase64(std::string_view text, Base64Alphabet alphabet) {
  std::string out(text.size() / 4 * 3 + 3, '\0');
  std::size_t size = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                        text.size(), nullptr, &size, &end, Variant(alphabet)) != 0 ||
      end != text.data() + text.size())
    return std::nullopt;
  out.resize(size);
  return out;
}

}  // namespace agentstream::net
