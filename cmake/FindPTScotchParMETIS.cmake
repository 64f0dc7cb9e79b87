# Finds the ParMETIS interface of PT-Scotch with 64-bit integers (Debian 12: libptscotch-dev and
# libscotchparmetis-dev, headers under parmetis-int64/ and scotch-int64/) and defines PTScotch::ParMETIS.
#
# The static archives are linked, not the shared libraries: the shared libptscotchparmetisv3 of scotch-int64/ names
# its PT-Scotch by a soname that the dynamic loader resolves to the default (32-bit) build in the system library
# folder, and 64-bit ParMETIS calls into 32-bit PT-Scotch corrupt the heap. The archives are position independent,
# so the Python module can take them too.
find_path(PTScotchParMETIS_INCLUDE_DIR parmetis.h PATH_SUFFIXES parmetis-int64 NO_DEFAULT_PATH
          PATHS /usr/include /usr/local/include)
find_path(PTScotchParMETIS_SCOTCH_INCLUDE_DIR ptscotch.h PATH_SUFFIXES scotch-int64 NO_DEFAULT_PATH
          PATHS /usr/include /usr/local/include)
set(_ptscotch_dirs /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/scotch-int64 /usr/lib/x86_64-linux-gnu/scotch-int64
                   /usr/lib/aarch64-linux-gnu/scotch-int64)
foreach(_lib ptscotchparmetisv3 ptscotch scotch ptscotcherr)
  find_library(PTScotchParMETIS_${_lib}_LIBRARY NAMES lib${_lib}.a PATHS ${_ptscotch_dirs} NO_DEFAULT_PATH)
  list(APPEND _ptscotch_vars PTScotchParMETIS_${_lib}_LIBRARY)
endforeach()
find_package(ZLIB QUIET)
find_package(BZip2 QUIET)
find_library(PTScotchParMETIS_LZMA_LIBRARY lzma)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PTScotchParMETIS REQUIRED_VARS PTScotchParMETIS_INCLUDE_DIR PTScotchParMETIS_SCOTCH_INCLUDE_DIR ${_ptscotch_vars}
                                  PTScotchParMETIS_LZMA_LIBRARY)
if(PTScotchParMETIS_FOUND AND NOT TARGET PTScotch::ParMETIS)
  add_library(PTScotch::ParMETIS INTERFACE IMPORTED)
  set_target_properties(PTScotch::ParMETIS PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${PTScotchParMETIS_INCLUDE_DIR};${PTScotchParMETIS_SCOTCH_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES
      "${PTScotchParMETIS_ptscotchparmetisv3_LIBRARY};${PTScotchParMETIS_ptscotch_LIBRARY};${PTScotchParMETIS_scotch_LIBRARY};${PTScotchParMETIS_ptscotcherr_LIBRARY};ZLIB::ZLIB;BZip2::BZip2;${PTScotchParMETIS_LZMA_LIBRARY};m")
endif()
mark_as_advanced(PTScotchParMETIS_INCLUDE_DIR PTScotchParMETIS_SCOTCH_INCLUDE_DIR ${_ptscotch_vars} PTScotchParMETIS_LZMA_LIBRARY)
