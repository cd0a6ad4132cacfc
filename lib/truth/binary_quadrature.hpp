#pragma once
// Exact truth at K = 2 for every `dirichlet` map and any alpha, by one-dimensional quadrature.
//
// With x = c_1 ~ Beta(alpha_1, alpha_2) and s = logit x, every map makes lambda = logit p_1 a
// function of s alone: lambda = A log x + B log(1 - x) + d for identity (A = 1, B = -1),
// temperature (1/T, -1/T), power (t_1, -t_2) and affine_logit (W_11 - W_21, W_12 - W_22,
// d = b_1 - b_2); `top_label` gives p_1 = g(x) for x >= 1/2 and 1 - g(1 - x) below, g kyle's
// automorphism, increasing for every gamma. On K = 2 the reported vector is p = (f, 1 - f)
// with f = sigmoid(lambda), so every quantity is an integral over lambda of
//   q(lambda) = sum_i Beta_s(s_i) / |d lambda/d s (s_i)|      (density of lambda)
//   phi(lambda) = E[x | lambda] = sum_i x_i w_i / sum_i w_i  (r_1(p), w_i the terms of q)
// over the preimages s_i of lambda, one per monotone branch of s -> lambda: one for every map
// but affine_logit with A and -B of opposite signs (then d lambda/d s = A(1 - x) - B x vanishes
// at x = A/(A + B) and lambda has two preimages on one side of its extremum; q is singular
// there, so with two branches every integral int q F d lambda runs over s instead, branch by
// branch: int Beta_s(s) F(lambda(s)) ds, F bounded).
// In these terms (z = sigmoid(|lambda|) the top confidence):
//   accuracy = int q [lambda > 0 ? phi : 1 - phi],   overconfidence = int q [z - that],
//   brier = int q [2 (f - phi)^2 + 2 phi (1 - phi)],  nll = -int q [phi log f + (1-phi) log(1-f)],
//   classwise_ece_l1 = int q |phi - f| (p_1 fixes p, so r_2 = 1 - r_1 and both classes agree),
//   canonical_l1 = 2 classwise, canonical_l2^2 = 2 int q (phi - f)^2,
//   ece_top_l1 = int_0^inf |N|, ece_top_l2^2 = int_0^inf N^2 / (q(l) + q(-l)), where
//   N(l) = q(l)(phi(l) - z) + q(-l)(1 - phi(-l) - z) (Z = z comes from f = z or f = 1 - z).
// Using lambda rather than x turns the Beta density's endpoint singularities (alpha < 1) into
// exponential tails, integrated by exp_sinh; the finite pieces by tanh_sinh. Each integral is
// split at lambda = 0 (the argmax flips), at the ends of the branches' images (where q may be
// singular) and at the sign changes of |.|'s argument (found on a grid of the Beta's quantile
// range in s and refined by TOMS 748). The error is the sum of the integrators' estimates.
#include "generators/dirichlet.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

// All nine quantities, method `quadrature`. Returns false (out untouched) unless K = 2 and the
// map is non-constant (affine_logit with A = B = 0 reports one p whatever c is).
bool binary_quadrature_truth(const DirichletGenerator& generator, GroundTruth& out);

// int q(lambda) d lambda, which must be 1 (a check of the change of variables, for tests). With
// a fold (two branches) the integrals run over s (binary_quadrature.cpp) and this is the mass
// of s at which lambda(s) has a density.
double binary_quadrature_mass(const DirichletGenerator& generator);

}  // namespace calbench
