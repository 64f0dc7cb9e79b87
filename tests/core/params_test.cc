// core/params.h declarations seen through both visitors: JSON round trips (enums by name, absent keys keep
// defaults, wrong types name the key) and the CLI binder (flags derived from names, defaults shown, enums and
// integer lists parsed, bad values rejected).
#include "core/params.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tessel
