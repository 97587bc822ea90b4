# The installable package: `cmake --install` puts the public headers under include/overhead/
# (the source layout: <overhead/tok/tokenizer.hpp>, <overhead/chat/chat_template.hpp>,
# <overhead/binding/chat_binding.hpp>, the C API <overhead/overhead.h>), the libraries, the CMake
# package (find_package(overhead CONFIG): overhead::tokenizer, overhead::chat, overhead::c) and
# overhead.pc. Only the stable API's headers are installed; everything else stays internal.
include(CMakePackageConfigHelpers)

# The package's libraries are position-independent copies of the module libraries, compiled
# from the same sources with the same settings: they are also linked into shared objects (the C
# API's library, the Python module) and into users' own. The module libraries themselves stay as
# they are, because -fPIC costs the executables speed: thread_local access goes through the
# general TLS model (1.1% more instructions per byte encoded for phi-4, callgrind), and nothing
# there needs it. The copies follow the module CMakeLists.txt files as they change.
set(OVERHEAD_PACKAGE_MODULES util tok chat binding)
# Imported targets a module found for itself are visible only in its folder: found again here.
find_package(OpenSSL REQUIRED)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(PCRE2_SHARED REQUIRED IMPORTED_TARGET libpcre2-8)
# What the executables link in their own way is linked plainly here: the lazily opened libcrypto
# (src/lazy/) and the static C archives (cmake/OverheadCLibrary.cmake: not position-independent)
# would not do inside a shared object or a user's program; the package links the shared libraries.
set(OVERHEAD_PACKAGE_LINK_SWAPS
  "overhead_libcrypto=OpenSSL::Crypto"
  "overhead::pcre2=PkgConfig::PCRE2_SHARED"
  "overhead::utf8proc=PkgConfig::UTF8PROC")
set(OVERHEAD_PACKAGE_LIBRARIES "")
foreach(module ${OVERHEAD_PACKAGE_MODULES})
  set(original overhead_${module})
  set(copy overhead_${module}_pic)
  get_target_property(sources ${original} SOURCES)
  get_target_property(source_dir ${original} SOURCE_DIR)
  list(TRANSFORM sources PREPEND "${source_dir}/" REGEX "^[^/]")
  add_library(${copy} STATIC ${sources})
  add_dependencies(${copy} ${original})  # its generated sources (tok's Unicode table) are made first
  foreach(property INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FEATURES
                   LINK_LIBRARIES INTERFACE_LINK_LIBRARIES INTERFACE_COMPILE_DEFINITIONS)
    get_target_property(value ${original} ${property})
    if(value)
      # Links to another module library go to its copy.
      list(TRANSFORM value REPLACE "^overhead_(util|tok|chat|binding)$" "overhead_\\1_pic")
      list(TRANSFORM value REPLACE "^\\$<LINK_ONLY:overhead_(util|tok|chat|binding)>$" "$<LINK_ONLY:overhead_\\1_pic>")
      foreach(swap ${OVERHEAD_PACKAGE_LINK_SWAPS})
        string(REPLACE "=" ";" pair "${swap}")
        list(GET pair 0 from)
        list(GET pair 1 to)
        list(TRANSFORM value REPLACE "^${from}$" "${to}")
        list(TRANSFORM value REPLACE "^\\$<LINK_ONLY:${from}>$" "$<LINK_ONLY:${to}>")
      endforeach()
      set_property(TARGET ${copy} PROPERTY ${property} "${value}")
    endif()
  endforeach()
  # Inside the build the sources' folder; installed, include/ and include/overhead/ (below).
  set_property(TARGET ${copy} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "$<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/src>")
  set_target_properties(${copy} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    OUTPUT_NAME overhead_${module}
    ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/package/lib)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # Calls inside the library stay direct and inlinable: nothing interposes its symbols.
    target_compile_options(${copy} PRIVATE -fno-semantic-interposition)
  endif()
  list(APPEND OVERHEAD_PACKAGE_LIBRARIES ${copy})
endforeach()

# Exported names: overhead::tokenizer (Tokenizer), overhead::chat (ChatTemplate and ChatBinding),
# overhead::c (the C API); the rest are their parts.
set_target_properties(overhead_util_pic PROPERTIES EXPORT_NAME util)
set_target_properties(overhead_tok_pic PROPERTIES EXPORT_NAME tokenizer)
set_target_properties(overhead_chat_pic PROPERTIES EXPORT_NAME chat_template)
set_target_properties(overhead_binding_pic PROPERTIES EXPORT_NAME chat_binding)
add_library(overhead_chat_package INTERFACE)
target_link_libraries(overhead_chat_package INTERFACE overhead_chat_pic overhead_binding_pic)
set_target_properties(overhead_chat_package PROPERTIES EXPORT_NAME chat)

# Installed headers include each other as "chat/chat_template.hpp" (the repository's form), so the
# package puts both include/ (<overhead/tok/tokenizer.hpp>) and include/overhead/ ("tok/...") on
# its users' include path: code written against the repository compiles unchanged.
set(OVERHEAD_PUBLIC_HEADERS tok/tokenizer.hpp tok/errors.hpp chat/chat_template.hpp binding/chat_binding.hpp)
foreach(header ${OVERHEAD_PUBLIC_HEADERS})
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${CMAKE_SOURCE_DIR}/src/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/overhead/${dir})
endforeach()
install(FILES ${CMAKE_SOURCE_DIR}/include/overhead/overhead.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/overhead)

install(TARGETS ${OVERHEAD_PACKAGE_LIBRARIES} overhead_chat_package overhead_c
  EXPORT overheadTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${CMAKE_INSTALL_INCLUDEDIR}/overhead)
install(EXPORT overheadTargets NAMESPACE overhead:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/overhead)

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/overheadConfig.cmake.in
  ${CMAKE_BINARY_DIR}/package/overheadConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/overhead)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/overheadConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/overheadConfig.cmake ${CMAKE_BINARY_DIR}/package/overheadConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/overhead)

# overhead.pc: the C++ libraries (static) with what they need; liboverhead_c for C programs.
# Relocatable: the prefix is found from the .pc file's own place, so `cmake --install --prefix`
# anywhere gives a working file.
file(RELATIVE_PATH OVERHEAD_PC_UP "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
string(REGEX REPLACE "/$" "" OVERHEAD_PC_UP "${OVERHEAD_PC_UP}")
set(OVERHEAD_PC_PREFIX "\${pcfiledir}/${OVERHEAD_PC_UP}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/overhead.pc.in ${CMAKE_BINARY_DIR}/package/overhead.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/overhead.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
