// The one translation unit that compiles Asio's and Beast's implementation (separate
// compilation, docs/architecture.md): every other file includes their headers only.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
