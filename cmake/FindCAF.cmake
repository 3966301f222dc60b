# FindCAF.cmake — locate the C++ Actor Framework 0.17 as Debian packages it.
#
# Debian's libcaf-dev ships headers and shared libraries but neither a CMake
# package config nor a pkg-config file, so we find the pieces ourselves and
# wrap them in imported targets:
#
#   CAF::core     libcaf_core  (+ Threads::Threads)
#   CAF::io       libcaf_io    (middleman; needs CAF::core)
#   CAF::openssl  libcaf_openssl (only when found)
#
# Result variables: CAF_FOUND, CAF_INCLUDE_DIR, CAF_VERSION (e.g. 1706).
find_package(Threads REQUIRED)

find_path(CAF_INCLUDE_DIR NAMES caf/all.hpp)
find_library(CAF_CORE_LIBRARY NAMES caf_core)
find_library(CAF_IO_LIBRARY NAMES caf_io)
find_library(CAF_OPENSSL_LIBRARY NAMES caf_openssl)

if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_version_line
       REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" CAF_VERSION "${_caf_version_line}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY
  VERSION_VAR CAF_VERSION)

if(CAF_FOUND)
  if(CAF_VERSION VERSION_LESS 1706 OR CAF_VERSION VERSION_GREATER_EQUAL 1800)
    message(FATAL_ERROR "swarmkeeper is written against CAF 0.17.6 (CAF_VERSION 1706); found ${CAF_VERSION}")
  endif()
  if(NOT TARGET CAF::core)
    add_library(CAF::core SHARED IMPORTED)
    set_target_properties(CAF::core PROPERTIES
      IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES Threads::Threads)
    add_library(CAF::io SHARED IMPORTED)
    set_target_properties(CAF::io PROPERTIES
      IMPORTED_LOCATION "${CAF_IO_LIBRARY}"
      INTERFACE_LINK_LIBRARIES CAF::core)
    if(CAF_OPENSSL_LIBRARY)
      add_library(CAF::openssl SHARED IMPORTED)
      set_target_properties(CAF::openssl PROPERTIES
        IMPORTED_LOCATION "${CAF_OPENSSL_LIBRARY}"
        INTERFACE_LINK_LIBRARIES CAF::io)
    endif()
  endif()
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY CAF_OPENSSL_LIBRARY)
