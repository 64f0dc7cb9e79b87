// `tessel info` on what training writes (app/info_models.cc): a GCN or SVM checkpoint folder or an SVM model file.
#pragma once

#include "app/info.h"

namespace tessel::app {

// Describes `a.path` when it is a GCN checkpoint folder (one with checkpoint.json), an SVM checkpoint folder (one
// with svm_state.bin) or an SVM model file (LIBSVM's
// text, first line "svm_type ..."), read and checked by the readers training and prediction use; false for anything
// else (nothing printed).
bool InfoOfModel(const InfoOptions& a, const Printer& say);

}  // namespace tessel::app
