// A fixture for tools/check_sizes.py (ctest source_sizes_fixture): the functions below have known lengths, written
// after each name; the scanner must find exactly these, with these lengths, and nothing else.
#include <string>

namespace fixture {

constexpr auto kLambda = [](int x) { return x + 1; };  // a variable, not a function

__global__ void __launch_bounds__(256) Kernel(int* x) {  // Kernel: 3
  x[0] = 1;
}
const char* kBraces = "{ not code }";  // a string

struct Point {
  int x{0}, y{0};
  int Sum() const { return x + y; }  // Point::Sum: 1
  enum class Kind { kA, kB };
};

template <typename T>
T Twice(T v) {  // Twice: 4 (template prefix included)
  return v + v;
}

class Widget : public Point {
 public:
  Widget(int a, int b) : Point{}, a_(a), b_{b} {  // Widget::Widget: 3
    auto f = [&] { return a_; };
  }
  int Loop() const;

 private:
  int a_, b_;
};

int Widget::Loop() const {  // Widget::Loop: 7
  int s = 0;
  for (int i = 0; i < a_; ++i) {
    if (i % 2) s += b_;
  }
  return s;
}

// size: this one is long on purpose (the fixture's explained function)
void Explained() {  // Explained: 12
  std::string s = "}";
  /* { */
  s += '{';
  s += '}';
  s += "\"{";
  s += R"({)";
  s += "a";
  s += "b";
  s += "c";
  s += "d";
}

}  // namespace fixture
