# overhead_c_library(<target> <pkg-config module>): the global imported target <target> for a C
# library found by pkg-config, linked from its static archives when OVERHEAD_STATIC_DEPS is on.
#
# Why: every shared library costs every process start its mapping, its relocations and their
# page faults, for each of the dozens of short commands a user or a test runs. The libraries that
# only this code uses (GSL, PCRE2, utf8proc, SQLite, hiredis) are therefore linked into the binary.
# The system libraries (libm, libc, ...), zlib and OpenSSL stay shared, as does the C++ runtime:
# other shared libraries of the process load them too (libcurl, libpq, libsimdjson), and two
# copies of one library in a process can mix their state.
option(OVERHEAD_STATIC_DEPS "Link GSL, PCRE2, utf8proc, SQLite and hiredis statically (faster start)" ON)
set(OVERHEAD_ALWAYS_SHARED m dl pthread rt c z crypto ssl stdc++ gcc_s)

function(overhead_c_library target module)
  string(MAKE_C_IDENTIFIER "OVERHEAD_PKG_${module}" prefix)
  string(TOUPPER "${prefix}" prefix)
  pkg_check_modules(${prefix} REQUIRED ${module})
  if(OVERHEAD_STATIC_DEPS)
    set(names ${${prefix}_STATIC_LIBRARIES})
  else()
    set(names ${${prefix}_LIBRARIES})
  endif()
  set(libs)
  foreach(name IN LISTS names)
    if(OVERHEAD_STATIC_DEPS AND NOT name IN_LIST OVERHEAD_ALWAYS_SHARED)
      # A cache variable of its own (not pkg-config's), so a build folder configured before this
      # option existed still switches to the archive.
      find_library(OVERHEAD_STATIC_LIB_${name} NAMES lib${name}.a HINTS ${${prefix}_STATIC_LIBRARY_DIRS} REQUIRED)
      list(APPEND libs ${OVERHEAD_STATIC_LIB_${name}})
    else()
      find_library(OVERHEAD_SHARED_LIB_${name} NAMES ${name} HINTS ${${prefix}_LIBRARY_DIRS})
      if(OVERHEAD_SHARED_LIB_${name})
        list(APPEND libs ${OVERHEAD_SHARED_LIB_${name}})
      else()
        list(APPEND libs ${name})
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES libs)
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${${prefix}_INCLUDE_DIRS}"
    INTERFACE_COMPILE_OPTIONS "${${prefix}_CFLAGS_OTHER}"
    INTERFACE_LINK_LIBRARIES "${libs}")
endfunction()
