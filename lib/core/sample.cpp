#include "core/sample.hpp"

#include "core/error.hpp"

namespace calbench {

void Sample::resize(std::size_t n, std::size_t k) {
  classes = k;
  size = n;
  p.resize(n * k);
  label.resize(n);
  confidence.resize(n);
  predicted.resize(n);
}

void Sample::summarise() {
  for (std::size_t i = 0; i < size; ++i) {
    const double* r = p.data() + i * classes;
    std::size_t best = 0;
    for (std::size_t k = 1; k < classes; ++k)
      if (r[k] > r[best]) best = k;
    predicted[i] = static_cast<std::uint32_t>(best);
    confidence[i] = r[best];
  }
}

Sample make_sample(std::size_t classes, std::vector<double> p, std::vector<std::uint32_t> labels) {
  if (classes < 2) throw DomainError("classes must be >= 2");
  if (p.size() != labels.size() * classes)
    throw DomainError("probabilities and labels disagree on the number of rows");
  Sample s;
  s.classes = classes;
  s.size = labels.size();
  s.p = std::move(p);
  s.label = std::move(labels);
  for (auto y : s.label)
    if (y >= classes) throw DomainError("label " + std::to_string(y) + " is not a class index");
  s.confidence.resize(s.size);
  s.predicted.resize(s.size);
  s.summarise();
  return s;
}

}  // namespace calbench
