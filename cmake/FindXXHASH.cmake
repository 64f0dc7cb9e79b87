# Finds xxHash (Debian: libxxhash-dev), used for the per-array checksums of the native formats.
find_path(XXHASH_INCLUDE_DIR xxhash.h)
find_library(XXHASH_LIBRARY xxhash)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(XXHASH REQUIRED_VARS XXHASH_LIBRARY XXHASH_INCLUDE_DIR)
if(XXHASH_FOUND AND NOT TARGET XXHASH::XXHASH)
  add_library(XXHASH::XXHASH UNKNOWN IMPORTED)
  set_target_properties(XXHASH::XXHASH PROPERTIES IMPORTED_LOCATION "${XXHASH_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${XXHASH_INCLUDE_DIR}")
endif()
mark_as_advanced(XXHASH_INCLUDE_DIR XXHASH_LIBRARY)
