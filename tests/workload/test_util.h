// Helpers for the workload's CPU tests: seeded random tensors and a
// finite-difference gradient checker.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <span>
#include <vector>

namespace gpuscope::testing {

inline std::vector<double> random_vector(std::size_t n, unsigned seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

inline double dot(std::span<const double> a, std::span<const double> b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Central difference of f at every coordinate of x (or at `only` indices),
// compared with the analytic gradient: |fd - an| <= tol * max(1, |fd|, |an|).
inline void expect_gradient(std::vector<double>& x, const std::function<double()>& f, std::span<const double> analytic,
                            double tol, const char* what, std::vector<std::size_t> only = {}, double eps = 1e-6) {
  if (only.empty())
    for (std::size_t i = 0; i < x.size(); ++i) only.push_back(i);
  int failures = 0;
  for (std::size_t i : only) {
    const double keep = x[i];
    x[i] = keep + eps;
    const double up = f();
    x[i] = keep - eps;
    const double down = f();
    x[i] = keep;
    const double fd = (up - down) / (2 * eps);
    const double scale = std::max({1.0, std::abs(fd), std::abs(analytic[i])});
    if (std::abs(fd - analytic[i]) > tol * scale && failures++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: finite difference " << fd << " vs analytic " << analytic[i];
  }
  EXPECT_EQ(failures, 0) << what;
}

}  // namespace gpuscope::testing
