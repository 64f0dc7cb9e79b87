# Finds METIS 5 (Debian: libmetis-dev) and defines METIS::METIS; records IDXTYPEWIDTH in METIS_IDX_WIDTH.
include("${CMAKE_CURRENT_LIST_DIR}/TesselImportedLibrary.cmake")
find_path(METIS_INCLUDE_DIR metis.h)
find_library(METIS_LIBRARY metis)
if(METIS_INCLUDE_DIR)
  file(STRINGS "${METIS_INCLUDE_DIR}/metis.h" _metis_width REGEX "^#define IDXTYPEWIDTH")
  string(REGEX MATCH "[0-9]+" METIS_IDX_WIDTH "${_metis_width}")
endif()
tessel_imported_library(METIS METIS_IDX_WIDTH)
