// `tessel predict svm`: predicts LIBSVM text data with a LIBSVM model of any type (ours or svm-train's), writes one
// prediction per line like svm-predict and reports the accuracy, or for a regression model the mean squared error
// and the squared correlation coefficient (text or --json); also takes svm-predict's own command line
// ([-b 1] [-q] TEST_FILE MODEL_FILE OUTPUT_FILE). Every option declared once here.
#pragma once

#include <string>
#include <vector>

#include "app/given.h"
#include "app/run_options.h"

namespace tessel::app {

struct PredictSvmOptions {
  std::vector<std::string> files;  // svm-predict's positional form: TEST_FILE MODEL_FILE OUTPUT_FILE
  bool quiet = false;              // -q: nothing on stdout (svm-predict -q)
  std::string model;
  std::string data;
  std::string output;
  bool force = false;
  ThreadOptions threads;
  DeviceOptions device;
  int probability = 0;  // -b 1: probability estimates (classification) as svm-predict -b 1
  bool json = false;
  Given given;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    LibsvmFormParams(v,
                     "svm-predict's form: TEST_FILE MODEL_FILE OUTPUT_FILE instead of --data, --model and --output "
                     "(all three, as svm-predict takes them; an existing OUTPUT_FILE is replaced only with --force)",
                     3, "Quiet: print nothing on stdout (svm-predict -q)", c.files, c.quiet);
    v(ParamInfo{"model",
                "Model file (LIBSVM text format, from tessel or svm-train); required unless given as svm-predict's "
                "MODEL_FILE"}
          .Cli(),
      c.model);
    v(
        ParamInfo{
            "data",
            "Data: LIBSVM text or a native rows folder (tessel convert); labels are used for the accuracy; required "
            "unless given as svm-predict's TEST_FILE"}
            .Cli(),
        c.data);
    v(ParamInfo{"output", "Write one predicted label (regression: value) per line here (as svm-predict)"}.Cli(),
      c.output);
    v(
        ParamInfo{
            "force",
            "Replace an existing --output file (a regular file only; never a folder, a device or an input of the run)"}
            .Cli(),
        c.force);
    ThreadOptions::Params(c.threads, v);
    DeviceOptions::Params(c.device, v);
    v(ParamInfo{"probability",
                "1: probability estimates as svm-predict -b 1 (the model must be trained with -b 1); --output then "
                "starts with 'labels ...' and gives the label and each class's probability per row"}
          .Flags("-b,--probability")
          .Cli()
          .Range(0, 1),
      c.probability);
    v(ParamInfo{"json", "Print the accuracy (regression: mean squared error and squared correlation) as JSON"}.Cli(),
      c.json);
  }
};

// Predicts and writes --output; returns what svm-predict prints (the accuracy or the regression's errors).
std::string PredictSvm(const PredictSvmOptions& options);

}  // namespace tessel::app
