// Demangling of C++ (Itanium ABI) kernel names, as CUPTI reports them.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope {

// Returns the demangled form of `name`, or `name` itself when it is not a
// mangled C++ symbol (C kernels, already demangled names, garbage).
std::string demangle(std::string_view name);

}  // namespace gpuscope
