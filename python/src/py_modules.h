// The groups of functions of the extension module, each registered by its own source file, and the dataset handles
// they share.
#pragma once

#include <memory>

#include <pybind11/pybind11.h>

#include "datasets/dataset.h"

namespace tessel::python {

// A node dataset (graph, features, labels, split) owned by Python: loaded from a folder (memory-mapped) or built
// from arrays. Views of its arrays keep it alive.
struct NodeData {
  std::shared_ptr<datasets::NodeDataset> data;
};
// LIBSVM's data model: sparse rows (float64) and real labels.
struct RowData {
  std::shared_ptr<datasets::SparseRowDataset> data;
};

void RegisterData(pybind11::module_& m);  // py_data.cc: open, build, save, views
void RegisterGcn(pybind11::module_& m);   // py_gcn.cc: train, predict, partition
void RegisterSvm(pybind11::module_& m);   // py_svm.cc: fit, decision values, model files

}  // namespace tessel::python
