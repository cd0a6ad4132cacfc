// The bad-input corpus through the parsers alone, for the sanitizer build (docs/testing.md):
// parses every file given (JSON config text, or NPY by suffix) and
// prints one line per file. Exits 0 whatever each outcome; a sanitizer report aborts it.
#include <iostream>

#include "config/json_support.hpp"
#include "core/error.hpp"
#include "data/npy.hpp"
int main(int argc, char** argv) {
  using namespace calbench;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    try {
      if (f.size() > 4 && f.substr(f.size() - 4) == ".npy") {
        read_npy(f);
      } else {
        Problems p;
        read_json_file(f, p);
        for (const auto& line : p.render(f)) std::cout << "problem: " << line << '\n';
      }
      std::cout << "parsed: " << f << '\n';
    } catch (const ConfigError& e) {
      std::cout << "config error: " << e.problems().front().substr(0, 160) << '\n';
    } catch (const std::exception& e) {
      std::cout << "error: " << std::string(e.what()).substr(0, 160) << '\n';
    }
  }
}
