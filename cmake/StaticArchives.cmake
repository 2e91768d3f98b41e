# lockstep_use_static_archives(<imported target>...): with LOCKSTEP_STATIC_GRPC (the default),
# each imported shared library among the targets is linked from its static archive instead, where
# one lies beside it (Debian's -dev packages of gRPC, protobuf and Abseil ship both). A lockstep
# process then starts without loading some 60 shared libraries and resolving their symbols:
# 4 workers on a tiny graph took 87 ms of CPU dynamically linked, 47 ms so (bench/README.md).
# A target without an archive, or not a shared library, stays as it is. (On Debian 12 no shared
# library the project still links, OpenSSL, TBB, spdlog, fmt or re2, uses Abseil or protobuf, so a
# process holds one copy of each.)
option(LOCKSTEP_STATIC_GRPC "Link gRPC, protobuf and Abseil from their static archives" ON)

function(lockstep_use_static_archives)
  if(NOT LOCKSTEP_STATIC_GRPC)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    if(NOT TARGET ${target})
      continue()
    endif()
    get_target_property(imported ${target} IMPORTED)
    get_target_property(type ${target} TYPE)
    if(NOT imported OR NOT (type STREQUAL "SHARED_LIBRARY" OR type STREQUAL "UNKNOWN_LIBRARY"))
      continue()
    endif()
    get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
    set(suffixes "")
    if(configs)
      foreach(config IN LISTS configs)
        string(TOUPPER "_${config}" suffix)
        list(APPEND suffixes ${suffix})
      endforeach()
    endif()
    foreach(suffix IN ITEMS "" ${suffixes})
      get_target_property(location ${target} IMPORTED_LOCATION${suffix})
      if(NOT location)
        continue()
      endif()
      string(REGEX REPLACE "\\.so(\\.[0-9.]+)?$" ".a" archive "${location}")
      if(NOT archive STREQUAL location AND EXISTS "${archive}")
        # (No soname, and not IMPORTED_NO_SONAME either, which would make CMake link it as
        # -l<name> from the linker's search path instead of this archive.)
        set_target_properties(${target} PROPERTIES
          IMPORTED_LOCATION${suffix} "${archive}"
          IMPORTED_SONAME${suffix} "")
      endif()
    endforeach()
  endforeach()
endfunction()
