#include "trace/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace gpuscope {

std::string demangle(std::string_view name) {
  if (name.size() < 3 || name[0] != '_' || name[1] != 'Z') return std::string(name);
  const std::string z(name);  // __cxa_demangle needs a NUL-terminated string
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(z.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return z;
  return std::string(out.get());
}

}  // namespace gpuscope
