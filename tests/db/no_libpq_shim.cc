// Preloaded (LD_PRELOAD) into a lockstep process by db_test: a machine without libpq, where
// opening it fails as dlopen fails for a library that is not installed. Every other dlopen goes
// to the real one.
#include <dlfcn.h>

#include <cstring>

extern "C" void* dlopen(const char* file, int flags) noexcept {
  using Open = void* (*)(const char*, int);
  static const auto real = reinterpret_cast<Open>(::dlsym(RTLD_NEXT, "dlopen"));
  if (file != nullptr && std::strstr(file, "libpq") != nullptr) return nullptr;
  return real(file, flags);
}
