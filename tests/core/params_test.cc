// core/params.h declarations seen through both visitors: JSON round trips (enums by name, absent keys keep
// defaults, wrong types name the key) and the CLI binder (flags derived from names, defaults shown, enums and
// integer lists parsed, bad values rejected).
#include "core/params.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/params_json.h"
#include "tools/cli_params.h"

namespace tessel {

enum class Colour { kRed, kBlue };
template <>
struct EnumNames<Colour> {
  static constexpr std::array<std::pair<Colour, std::string_view>, 2> kNames{
      {{Colour::kRed, "red"}, {Colour::kBlue, "blue"}}};
};

// An enumeration with more spellings than names (as svm-train's -t 2): its Parse decides, names stay canonical.
enum class Size { kSmall, kLarge };
template <>
struct EnumNames<Size> {
  static constexpr std::array<std::pair<Size, std::string_view>, 2> kNames{
      {{Size::kSmall, "small"}, {Size::kLarge, "large"}}};
  static Size Parse(std::string_view s) {
    if (s == "small" || s == "0") return Size::kSmall;
    if (s == "large" || s == "1") return Size::kLarge;
    throw Error("size '" + std::string(s) + "': use small (0) or large (1)");
  }
};

namespace {

struct Inner {
  double rate = 0.5;
  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"learning_rate", "Step size"}, c.rate);
  }
};

struct Demo {
  int64_t hidden = 16;
  bool verbose = false;
  Colour colour = Colour::kRed;
  std::vector<int> fanouts{10, 25};
  std::string name = "x";
  Inner inner;
  int internal = 7;
  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"hidden", "Hidden units"}, c.hidden);
    v(ParamInfo{"verbose", "Talk more"}, c.verbose);
    v(ParamInfo{"colour", "Paint"}, c.colour);
    v(ParamInfo{"fanouts", "Per layer", {}, "Sampling"}, c.fanouts);
    v(ParamInfo{"name", "Name", "-n,--name"}, c.name);
    Inner::Params(c.inner, v);
    v(ParamInfo{"internal", "Not a flag", {}, {}, false}, c.internal);
  }
};

TEST(Params, FlagIsDerivedFromName) {
  EXPECT_EQ((ParamInfo{"weight_decay", ""}.Flag()), "--weight-decay");
  EXPECT_EQ((ParamInfo{"c", "", "-c,--cost"}.Flag()), "-c,--cost");
}

TEST(Params, JsonRoundTripKeepsEveryField) {
  Demo d;
  d.hidden = 64;
  d.verbose = true;
  d.colour = Colour::kBlue;
  d.fanouts = {5, -1};
  d.inner.rate = 0.25;
  d.internal = 3;
  const nlohmann::json j = ParamsToJson(d);
  EXPECT_EQ(j.at("colour").get<std::string>(), "blue");
  EXPECT_EQ(j.at("learning_rate"), 0.25);
  EXPECT_EQ(j.at("internal"), 3);
  Demo back;
  ParamsFromJson(j, &back);
  EXPECT_EQ(ParamsToJson(back), j);
}

TEST(Params, AbsentKeysKeepDefaultsAndBadTypesNameTheKey) {
  Demo d;
  ParamsFromJson(nlohmann::json{{"hidden", 8}}, &d);
  EXPECT_EQ(d.hidden, 8);
  EXPECT_EQ(d.name, "x");
  try {
    ParamsFromJson(nlohmann::json{{"colour", "green"}}, &d);
    FAIL() << "accepted an unknown colour";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("red, blue"), std::string::npos) << e.what();
  }
  try {
    ParamsFromJson(nlohmann::json{{"hidden", "many"}}, &d);
    FAIL() << "accepted a string for an integer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"hidden\""), std::string::npos) << e.what();
  }
}

// One field of each arithmetic type a configuration holds, for ParamsFromJson's range checks.
struct Typed {
  int degree = 3;
  int64_t count = 0;
  uint64_t seed = 1;
  float weight = 1.0F;
  double rate = 0.5;
  bool flag = false;
  std::vector<int> fanouts{10};
  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"degree", ""}, c.degree);
    v(ParamInfo{"count", ""}, c.count);
    v(ParamInfo{"seed", ""}, c.seed);
    v(ParamInfo{"weight", ""}, c.weight);
    v(ParamInfo{"rate", ""}, c.rate);
    v(ParamInfo{"flag", ""}, c.flag);
    v(ParamInfo{"fanouts", ""}, c.fanouts);
  }
};

TEST(Params, JsonNumbersOutOfTheirFieldsRangeAreRefusedNamingTheKey) {
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {R"({"degree": 1e30})", "\"degree\" is 1e+30, out of range; give an integer in [-2147483648, 2147483647]"},
           {R"({"degree": 2147483648})", "\"degree\" is 2147483648, out of range"},
           {R"({"degree": 2.5})", "\"degree\" is 2.5, not a whole number"},
           {R"({"degree": "3"})", "\"degree\" is \"3\", not a number"},
           {R"({"degree": true})", "\"degree\" is true, not a number"},
           {R"({"count": 9223372036854775808})", "\"count\" is 9223372036854775808, out of range"},
           {R"({"count": 1e19})", "\"count\" is 1e+19, out of range"},
           {R"({"seed": -1})", "\"seed\" is -1, out of range; give an integer in [0, 18446744073709551615]"},
           {R"({"seed": 1e20})", "\"seed\" is 1e+20, out of range"},
           {R"({"weight": 1e39})", "\"weight\" is 1e+39, out of range; give a finite number"},
           {R"({"rate": "0.5"})", "\"rate\" is \"0.5\", not a number"},
           {R"({"flag": 1})", "\"flag\" is 1; give true or false"},
           {R"({"fanouts": [10, 1e10]})", "\"fanouts[1]\" is 10000000000.0, out of range"},
           {R"({"fanouts": [1.5]})", "\"fanouts[0]\" is 1.5, not a whole number"},
           {R"({"fanouts": 5})", "\"fanouts\" is 5, not a list of numbers"},
       }) {
    Typed t;
    try {
      ParamsFromJson(nlohmann::json::parse(text), &t);
      ADD_FAILURE() << "accepted " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << text << " -> " << e.what();
    }
  }
  // Every value within its type is taken exactly, integral floats included.
  Typed t;
  ParamsFromJson(nlohmann::json::parse(R"({"degree": -2147483648, "count": -9223372036854775808,
      "seed": 18446744073709551615, "weight": -3.4e38, "rate": 1e300, "flag": true, "fanouts": [-1, 2147483647, 4.0]})"),
                 &t);
  EXPECT_EQ(t.degree, INT32_MIN);
  EXPECT_EQ(t.count, INT64_MIN);
  EXPECT_EQ(t.seed, UINT64_MAX);
  EXPECT_EQ(t.weight, -3.4e38F);
  EXPECT_EQ(t.rate, 1e300);
  EXPECT_TRUE(t.flag);
  EXPECT_EQ(t.fanouts, (std::vector<int>{-1, INT32_MAX, 4}));
  ParamsFromJson(nlohmann::json::parse(R"({"degree": 3.0, "seed": 0.0})"), &t);
  EXPECT_EQ(t.degree, 3);
  EXPECT_EQ(t.seed, 0U);
}

TEST(Params, CliBindsParsesAndShowsDefaults) {
  CLI::App app("demo");
  Demo d;
  const tools::ParamOptions opts = tools::AddParams(&app, &d);
  const std::string help = app.help();
  EXPECT_NE(help.find("--hidden"), std::string::npos);
  EXPECT_NE(help.find("--learning-rate"), std::string::npos);
  EXPECT_NE(help.find("10,25"), std::string::npos) << help;
  EXPECT_NE(help.find("red|blue"), std::string::npos) << help;
  EXPECT_EQ(help.find("--internal"), std::string::npos) << "a JSON-only parameter became a flag";
  app.parse("--hidden 32 --verbose --colour blue --fanouts 3,4,5 -n y", false);
  EXPECT_EQ(d.hidden, 32);
  EXPECT_TRUE(d.verbose);
  EXPECT_EQ(d.colour, Colour::kBlue);
  EXPECT_EQ(d.fanouts, (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(d.name, "y");
  EXPECT_TRUE(opts.Given("hidden"));
  EXPECT_FALSE(opts.Given("learning_rate"));
  EXPECT_THROW((void)opts["nope"], Error);
}

TEST(Params, CliRejectsBadValues) {
  {
    CLI::App app("demo");
    Demo d;
    tools::AddParams(&app, &d);
    try {
      app.parse("--colour green", false);
      FAIL() << "an unknown enumeration name was accepted";
    } catch (const CLI::ValidationError& e) {
      EXPECT_NE(std::string(e.what()).find("'green' is not one of red, blue"), std::string::npos) << e.what();
    }
  }
  {
    CLI::App app("demo");
    Demo d;
    tools::AddParams(&app, &d);
    // A bad list is CLI11's validation error (reported by the parser), not an exception escaping it.
    EXPECT_THROW(app.parse("--fanouts 3,x", false), CLI::ValidationError);
  }
}

struct Sized {
  Size size = Size::kSmall;
  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"size", "How big", "-s,--size"}, c.size);
  }
};

TEST(Params, EnumParseTakesAliasesAndNamesStayCanonical) {
  EXPECT_EQ(ParseEnum<Size>("1", "--size"), Size::kLarge);
  EXPECT_EQ(EnumName(Size::kLarge), "large");
  CLI::App app("demo");
  Sized d;
  tools::AddParams(&app, &d);
  app.parse("-s 1", false);
  EXPECT_EQ(d.size, Size::kLarge);
  EXPECT_EQ(ParamsToJson(d).at("size").get<std::string>(), "large");
  CLI::App bad("demo");
  Sized e;
  tools::AddParams(&bad, &e);
  try {
    bad.parse("--size huge", false);
    FAIL() << "an unknown spelling was accepted";
  } catch (const CLI::ValidationError& err) {
    EXPECT_NE(std::string(err.what()).find("use small (0) or large (1)"), std::string::npos) << err.what();
  }
}

// The message of the ValidationError that parsing `args` raises ("" when it parses).
std::string ParseError(CLI::App& app, const std::string& args) {
  try {
    app.parse(args, false);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

// As ParseError, for arguments given one by one, as argv holds them (CLI11's string form drops empty words).
std::string ParseArgsError(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

struct Numbers {
  uint64_t seed = 1;
  int threads = 0;
  int64_t count = -1;
  int32_t small = 0;
  double rate = 0.5;
  float weight = 1.0F;
  std::string path;
};

// A CLI app with one strictly parsed option per field of *n.
void AddNumbers(CLI::App* app, Numbers* n) {
  tools::AddOption(app, "--seed", &n->seed, "Seed")->capture_default_str();
  tools::AddOption(app, "--threads,-t", &n->threads, "Threads", {0, 4096})->capture_default_str();
  tools::AddOption(app, "--count", &n->count, "Count");
  tools::AddOption(app, "--small", &n->small, "Small");
  tools::AddOption(app, "--rate", &n->rate, "Rate", {0, 1});
  tools::AddOption(app, "--weight", &n->weight, "Weight");
  tools::AddOption(app, "--path", &n->path, "Path");
}

// Parses `args` into a fresh app of AddNumbers and expects an error containing `expected`.
void ExpectRefused(const std::string& args, const std::string& expected) {
  CLI::App app("demo");
  Numbers n;
  AddNumbers(&app, &n);
  const std::string error = ParseError(app, args);
  EXPECT_NE(error.find(expected), std::string::npos) << args << " -> '" << error << "'";
}

TEST(CliOptions, IntegersNeverWrapAndNameTheOptionAndRange) {
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::string>>{
           {"--seed -1", "--seed -1: out of range; give an integer in [0, 18446744073709551615]"},
           {"--seed 18446744073709551616", "--seed 18446744073709551616: out of range"},
           {"--seed 1e23", "--seed 1e23: not an integer (write whole numbers in plain digits"},
           {"--seed 2.5", "--seed 2.5: not an integer"},
           {"--seed 0x10", "--seed 0x10: not an integer"},
           {"--seed ' 7'", "--seed  7: not an integer"},
           {"--seed abc", "--seed abc: not an integer; give an integer in [0, 18446744073709551615]"},
           {"--threads 2147483647", "--threads 2147483647: out of range; give an integer in [0, 4096]"},
           {"-t -1", "--threads -1: out of range; give an integer in [0, 4096]"},
           {"--count 9223372036854775808", "--count 9223372036854775808: out of range"},
           {"--count -9223372036854775809", "--count -9223372036854775809: out of range"},
           {"--small 2147483648", "--small 2147483648: out of range; give an integer in [-2147483648, 2147483647]"},
           {"--small 1e8", "--small 1e8: not an integer"},
           {"--small +-5", "--small +-5: not an integer"},
           {"--seed +-5", "--seed +-5: not an integer"},
           {"--count -", "--count -: not an integer"},
       }) {
    ExpectRefused(args, expected);
  }
  CLI::App app("demo");
  Numbers n;
  AddNumbers(&app, &n);
  EXPECT_EQ(ParseError(app, "--seed 18446744073709551615 -t 4096 --count -9223372036854775808 --small +7"), "");
  EXPECT_EQ(n.seed, UINT64_MAX);
  EXPECT_EQ(n.threads, 4096);
  EXPECT_EQ(n.count, INT64_MIN);
  EXPECT_EQ(n.small, 7);
}

TEST(CliOptions, FloatsMustBeFiniteAndInRange) {
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::string>>{
           {"--rate nan", "--rate nan: not finite; give a number in [0, 1]"},
           {"--rate inf", "--rate inf: not finite"},
           {"--rate 1.5", "--rate 1.5: out of range; give a number in [0, 1]"},
           {"--rate x", "--rate x: not a number"},
           {"--weight -inf", "--weight -inf: not finite; give a finite number"},
           {"--weight 1e300", "--weight 1e300: out of range; give a finite number"},  // beyond float
           {"--weight 1e400", "--weight 1e400: not finite"},
       }) {
    ExpectRefused(args, expected);
  }
  CLI::App app("demo");
  Numbers n;
  AddNumbers(&app, &n);
  EXPECT_EQ(ParseError(app, "--rate 0.25 --weight -3e5"), "");
  EXPECT_EQ(n.rate, 0.25);
  EXPECT_EQ(n.weight, -3e5F);
}

TEST(CliOptions, EmptyValuesAreRefusedNotUnset) {
  CLI::App app("demo");
  Numbers n;
  AddNumbers(&app, &n);
  EXPECT_NE(ParseArgsError(app, {"--path", ""}).find("--path: the value is empty"), std::string::npos);
  CLI::App app2("demo");
  AddNumbers(&app2, &n);
  EXPECT_NE(ParseArgsError(app2, {"--count", ""}).find("--count: the value is empty"), std::string::npos);
  CLI::App app3("demo");
  AddNumbers(&app3, &n);
  EXPECT_NE(ParseArgsError(app3, {"--rate="}).find("--rate"), std::string::npos);  // refused, never taken as unset
  // Through the parameter declarations too: text, numbers and lists.
  for (const auto& [args, expected] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"-n", ""}, "--name: the value is empty"},
           {{"--hidden", "1e8"}, "--hidden 1e8: not an integer"},
           {{"--learning-rate", "nan"}, "--learning-rate nan: not finite"},
           {{"--fanouts", "2147483648,1"}, "--fanouts: 2147483648 is out of range"},
           {{"--fanouts", ""}, "--fanouts: the value is empty"},
       }) {
    CLI::App demo("demo");
    Demo d;
    tools::AddParams(&demo, &d);
    const std::string message = ParseArgsError(demo, args);
    EXPECT_NE(message.find(expected), std::string::npos) << args[0] << " -> '" << message << "'";
  }
}

TEST(CliOptions, HelpStillShowsTypesAndDefaults) {
  CLI::App app("demo");
  Numbers n;
  AddNumbers(&app, &n);
  const std::string help = app.help();
  EXPECT_NE(help.find("--seed UINT=1"), std::string::npos) << help;
  EXPECT_NE(help.find("--threads INT=0"), std::string::npos) << help;
  EXPECT_NE(help.find("--rate FLOAT"), std::string::npos) << help;
  EXPECT_NE(help.find("--path TEXT"), std::string::npos) << help;
  EXPECT_EQ(tools::cli_detail::DisplayName("-c,--cost"), "--cost");
  EXPECT_EQ(tools::cli_detail::DisplayName("-a"), "-a");
  EXPECT_EQ(tools::cli_detail::DisplayName("--overlap,!--no-overlap"), "--overlap");
}

// A misspelt option gets the known one it most likely meant (tools/cli_params.h SuggestOption), and nothing when
// none is close.
TEST(CliOptions, SuggestionsForMisspeltOptions) {
  const std::vector<tools::KnownOption> known = {{"--epochs", "Training epochs"},
                                                 {"--lr", "Adam learning rate (> 0)"},
                                                 {"--batch-size", "Seed nodes per step (0: full batch)"},
                                                 {"--hidden", "Hidden units per layer"},
                                                 {"--weight-decay", "L2 penalty of the first layer"}};
  EXPECT_EQ(tools::SuggestOption("--Batch_Size", known), "--batch-size");     // case and '_'
  EXPECT_EQ(tools::SuggestOption("--epoch", known), "--epochs");              // one edit
  EXPECT_EQ(tools::SuggestOption("--weight-decy", known), "--weight-decay");  // one edit in a longer name
  EXPECT_EQ(tools::SuggestOption("--learning-rate", known), "--lr");          // initials
  EXPECT_EQ(tools::SuggestOption("--hid", known), "--hidden");                // a prefix
  EXPECT_EQ(tools::SuggestOption("--penalty", known), "--weight-decay");      // a word of its help
  EXPECT_EQ(tools::SuggestOption("--frobnicate", known), "");
  EXPECT_EQ(tools::SuggestOption("--", known), "");
  EXPECT_EQ(tools::SuggestOption("--x", {}), "");
}

}  // namespace
}  // namespace tessel
