# Finds xxHash (Debian: libxxhash-dev), used for the per-array checksums of the native formats.
include("${CMAKE_CURRENT_LIST_DIR}/TesselImportedLibrary.cmake")
find_path(XXHASH_INCLUDE_DIR xxhash.h)
find_library(XXHASH_LIBRARY xxhash)
tessel_imported_library(XXHASH)
