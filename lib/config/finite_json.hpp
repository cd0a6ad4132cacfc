#pragma once
// The non-finite guard (core/finite_guard.hpp) over a JSON document calbench is about to print
// or write (`calbench eval --json`, `fit --json` and `--out`, `plan --out`): nlohmann writes a
// NaN or an infinity as `null`, so a document holding one is refused with a NumericalError
// naming `what` and the value's JSON pointer instead.
#include <cmath>
#include <string>

#include "config/json_support.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {

template <typename BasicJson>
void require_finite_json(const BasicJson& doc, const std::string& what,
                         const std::string& pointer = "") {
  if (doc.is_number_float()) {
    const double x = doc.template get<double>();
    if (!std::isfinite(x))
      throw NumericalError(what + ": " + (pointer.empty() ? "/" : pointer) + " is " +
                           format_double(x) + ", not a finite number");
  } else if (doc.is_object()) {
    for (auto it = doc.begin(); it != doc.end(); ++it)
      require_finite_json(it.value(), what, pointer_join(pointer, it.key()));
  } else if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i)
      require_finite_json(doc[i], what, pointer_join(pointer, i));
  }
}

}  // namespace calbench
