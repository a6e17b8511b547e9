// Exact 2-state, 2-action MDP math for the polytope page, in the browser (plain ES module, no deps).
//
// Implements, for the MDP of Appendix A / Section 6.1 (and any 2x2 MDP), what pvnviz/polytope/mdp.py and
// pvnviz.polytope.experiment.exact_view compute in numpy:
//   - Eq. (2), Section 3: J(pi) = d0^T (I - gamma P_pi)^-1 r_pi, with V = (I - gamma P_pi)^-1 r_pi;
//   - the discounted state weighting d_pi = d0^T (I - gamma P_pi)^-1 and the exact gradient
//     dJ/dx_s = d_pi(s) (Q(s, a1) - Q(s, a2)) (policy gradient theorem, Eq. 1);
//   - Appendix A's flat convention: r(s_i, a_j) = r_hat[i*2 + j], P(s_k | s_i, a_j) = P_hat[i*2 + j][k];
//   - Section 6.1's exact view: the value polytope (a cloud of policies), the images of the 4 sides of
//     the policy square, the 4 deterministic corners and the optimum, the gradient field on a G x G grid
//     and projected gradient ascent x <- clip(x + lr * grad J(x), 0, 1).
//
// A policy is x = [P(a1|s1), P(a1|s2)]. Layouts (all Float64Array, row-major, interleaved pairs):
//   - policies xs[2k + s] = x_k[s]; values V[2k + s] = V_k(s_{s+1}); objectives J[k];
//   - field[(i * G + j) * 2 + s] = dJ/dx_s at x = (grid[i], grid[j]), grid = linspace(0, 1, G)
//     (exact_view's field[i, j, s]);
//   - edges: 4 arrays V[2e + s] for the sides (t, 0), (t, 1), (0, t), (1, t), t = linspace(0, 1, 101);
//   - corners in deterministic_policies' order: x = (1, 1), (1, 0), (0, 1), (0, 0).
//
// Accuracy: the 2x2 system is solved by Cramer's rule with the determinant written without
// cancellation. With a = gamma P_pi(s2|s1), b = gamma P_pi(s1|s2) and c_s = 1 - gamma * (row sum of
// P_pi at s) (= 1 - gamma for stochastic rows), I - gamma P_pi = [[c1 + a, -a], [-b, c2 + b]] and
// det = c1 (c2 + b) + c2 a, a sum of non-negative terms; V1 - V2 = (c2 r1 - c1 r2) / det feeds the
// gradient so Q(s, a1) - Q(s, a2) does not subtract two large Q values. These are identities for any
// entries (rows are not assumed to sum to one). Measured against the Python reference: values within
// 3e-14 and gradients within 1.1e-12 (relative to max(1, |x|)), numpy's rounding: against exact rational
// arithmetic the worst gradient field here is within 1.6e-13, numpy's within 1.2e-12.
// tests/test_browser_mdp_js.py checks every function against the Python reference to 1e-9.
//
// Timing: a cloud of 5,000 policies (output buffers reused via `out`, so no fresh arrays per call) + a 20x20 field
// + a 100-step ascent fit well inside one frame once warm; tests/test_browser_mdp_js.py prints the median and fails
// above 50 ms.

const C_GAMMA = 0, C_ONE_MINUS_GAMMA = 1;
const C_Q = 2; // 4: gamma-free leave probabilities q[s][a] = P(s' != s | s, a) at 2 + 2s + a
const C_E = 6; // 4: row defects (1 - P[s][a][0]) - P[s][a][1] (0 for stochastic rows)
const C_R = 10; // 4: r[s][a]
const C_DR = 14; // 2: r[s][0] - r[s][1]
const C_DP = 16; // 2: P[s][0][0] - P[s][1][0]
const C_DS = 18; // 2: row sum of (s, a1) minus row sum of (s, a2)
const C_D0 = 20; // 2: d0
const NUM_COEFFICIENTS = 22;

// One policy's results (module scratch, so the batched loops allocate nothing).
const OUT = new Float64Array(6);
const O_V1 = 0, O_V2 = 1, O_D1 = 2, O_D2 = 3, O_G1 = 4, O_G2 = 5;

function checkShape(rewards, transitions, d0) {
  const ok = rewards.length === 4 && transitions.length === 4 && d0.length === 2 &&
    Array.from(transitions).every((row) => row.length === 2);
  if (!ok) throw new Error("need rewards[4], transitions[4][2] and d0[2] (Appendix A's flat convention)");
}

/** Appendix A's flat MDP -> {P[s][a][s'], r[s][a], gamma, d0[s]} (as TabularMDP.from_flat). */
export function mdpFromFlat(rewards, transitions, gamma, d0 = [0.5, 0.5]) {
  checkShape(rewards, transitions, d0);
  const P = [0, 1].map((i) => [0, 1].map((j) => [0, 1].map((k) => Number(transitions[i * 2 + j][k]))));
  const r = [0, 1].map((i) => [0, 1].map((j) => Number(rewards[i * 2 + j])));
  return { P, r, gamma: Number(gamma), d0: [Number(d0[0]), Number(d0[1])] };
}

function coefficients(mdp) {
  const c = new Float64Array(NUM_COEFFICIENTS);
  const { P, r, gamma, d0 } = mdp;
  c[C_GAMMA] = gamma;
  c[C_ONE_MINUS_GAMMA] = 1 - gamma;
  for (let s = 0; s < 2; s++) {
    for (let a = 0; a < 2; a++) {
      c[C_Q + 2 * s + a] = P[s][a][1 - s];
      c[C_E + 2 * s + a] = (1 - P[s][a][0]) - P[s][a][1];
      c[C_R + 2 * s + a] = r[s][a];
    }
    c[C_DR + s] = r[s][0] - r[s][1];
    c[C_DP + s] = P[s][0][0] - P[s][1][0];
    c[C_DS + s] = c[C_E + 2 * s + 1] - c[C_E + 2 * s];
    c[C_D0 + s] = d0[s];
  }
  return c;
}

// V (and, if wantGradient, d_pi and dJ/dx) of policy (x1, x2) into OUT.
function evaluate(c, x1, x2, wantGradient) {
  const g = c[C_GAMMA], h = c[C_ONE_MINUS_GAMMA];
  const y1 = 1 - x1, y2 = 1 - x2;
  const a = g * (x1 * c[C_Q] + y1 * c[C_Q + 1]);
  const b = g * (x2 * c[C_Q + 2] + y2 * c[C_Q + 3]);
  const c1 = h + g * (x1 * c[C_E] + y1 * c[C_E + 1]);
  const c2 = h + g * (x2 * c[C_E + 2] + y2 * c[C_E + 3]);
  const r1 = x1 * c[C_R] + y1 * c[C_R + 1];
  const r2 = x2 * c[C_R + 2] + y2 * c[C_R + 3];
  const a11 = c1 + a, a22 = c2 + b;
  const det = c1 * a22 + c2 * a;
  const v2 = (a11 * r2 + b * r1) / det;
  OUT[O_V1] = (a22 * r1 + a * r2) / det;
  OUT[O_V2] = v2;
  if (!wantGradient) return;
  const w = (c2 * r1 - c1 * r2) / det; // V1 - V2
  const d1 = (a22 * c[C_D0] + b * c[C_D0 + 1]) / det;
  const d2 = (a11 * c[C_D0 + 1] + a * c[C_D0]) / det;
  OUT[O_D1] = d1;
  OUT[O_D2] = d2;
  OUT[O_G1] = d1 * (c[C_DR] + g * (c[C_DP] * w + c[C_DS] * v2));
  OUT[O_G2] = d2 * (c[C_DR + 1] + g * (c[C_DP + 1] * w + c[C_DS + 1] * v2));
}

/** [V(s1), V(s2)] of the policy x = [x1, x2]: the solution of (I - gamma P_pi) V = r_pi. */
export function values(mdp, x1, x2) {
  evaluate(coefficients(mdp), x1, x2, false);
  return [OUT[O_V1], OUT[O_V2]];
}

/** J = d0 . V (Eq. 2). */
export function objective(mdp, x1, x2) {
  evaluate(coefficients(mdp), x1, x2, false);
  return OUT[O_V1] * mdp.d0[0] + OUT[O_V2] * mdp.d0[1];
}

/** Q[s][a] = r[s][a] + gamma sum_s' P[s][a][s'] V[s'] for given values V = [V1, V2]. */
export function qValues(mdp, V) {
  const { P, r, gamma } = mdp;
  return [0, 1].map((s) => [0, 1].map((a) => r[s][a] + gamma * (P[s][a][0] * V[0] + P[s][a][1] * V[1])));
}

/** Discounted state weighting [d_pi(s1), d_pi(s2)] = d0^T (I - gamma P_pi)^-1. */
export function occupancy(mdp, x1, x2) {
  evaluate(coefficients(mdp), x1, x2, true);
  return [OUT[O_D1], OUT[O_D2]];
}

/** [dJ/dx1, dJ/dx2] = d_pi(s) (Q(s, a1) - Q(s, a2)). */
export function gradient(mdp, x1, x2) {
  evaluate(coefficients(mdp), x1, x2, true);
  return [OUT[O_G1], OUT[O_G2]];
}

/** numpy.linspace(start, stop, num) bit for bit: i * step + start, the last point exactly stop. */
export function linspace(start, stop, num) {
  const out = new Float64Array(num);
  const step = (stop - start) / (num - 1);
  for (let i = 0; i < num; i++) out[i] = num > 1 ? i * step + start : start;
  if (num > 1) out[num - 1] = stop;
  return out;
}

function valuesInto(c, d0, xs, V, J, count) {
  for (let k = 0; k < count; k++) {
    evaluate(c, xs[2 * k], xs[2 * k + 1], false);
    const v1 = OUT[O_V1], v2 = OUT[O_V2];
    V[2 * k] = v1;
    V[2 * k + 1] = v2;
    if (J) J[k] = v1 * d0[0] + v2 * d0[1];
  }
}

/** Values and J of N policies xs[2k + s]; `out` = {V: Float64Array(2N), J: Float64Array(N)} is reused. */
export function cloud(mdp, xs, out) {
  const count = xs.length >> 1;
  const V = out ? out.V : new Float64Array(2 * count);
  const J = out ? out.J : new Float64Array(count);
  valuesInto(coefficients(mdp), mdp.d0, xs, V, J, count);
  return { V, J };
}

/** The exact gradient on linspace(0, 1, G)^2: field[(i * G + j) * 2 + s] at x = (grid[i], grid[j]). */
export function field(mdp, gridSize, out) {
  const grid = linspace(0, 1, gridSize);
  const F = out || new Float64Array(2 * gridSize * gridSize);
  const c = coefficients(mdp);
  for (let i = 0; i < gridSize; i++) {
    for (let j = 0; j < gridSize; j++) {
      evaluate(c, grid[i], grid[j], true);
      F[(i * gridSize + j) * 2] = OUT[O_G1];
      F[(i * gridSize + j) * 2 + 1] = OUT[O_G2];
    }
  }
  return { grid, field: F };
}

/** Values of the 4 sides (t, 0), (t, 1), (0, t), (1, t) of the policy square, t = linspace(0, 1, points). */
export function edges(mdp, points = 101) {
  const t = linspace(0, 1, points);
  const c = coefficients(mdp);
  const sides = [[t, 0], [t, 1], [0, t], [1, t]];
  const xs = new Float64Array(2 * points);
  return sides.map(([first, second]) => {
    for (let e = 0; e < points; e++) {
      xs[2 * e] = typeof first === "number" ? first : first[e];
      xs[2 * e + 1] = typeof second === "number" ? second : second[e];
    }
    const V = new Float64Array(2 * points);
    valuesInto(c, mdp.d0, xs, V, null, points);
    return V;
  });
}

/** The 4 deterministic policies, in deterministic_policies' order, with their V and J. */
export function corners(mdp) {
  const x = Float64Array.of(1, 1, 1, 0, 0, 1, 0, 0);
  const { V, J } = cloud(mdp, x);
  return { x, V, J };
}

/** The best corner (numpy argmax: the first on ties): {index, x: [x1, x2], J}. */
export function optimum(mdp) {
  const { x, J } = corners(mdp);
  let index = 0;
  for (let k = 1; k < 4; k++) if (J[k] > J[index]) index = k;
  return { index, x: [x[2 * index], x[2 * index + 1]], J: J[index] };
}

const clip01 = (v) => Math.min(Math.max(v, 0), 1);

/** Projected gradient ascent x <- clip(x + lr * dJ/dx, 0, 1) on the exact J (polytope.gradient_ascent):
 * iterates x[2t + s] for t = 0..steps, with their values V[2t + s] and J[t]. */
export function ascent(mdp, start, learningRate, steps) {
  const x = new Float64Array(2 * (steps + 1));
  const c = coefficients(mdp);
  x[0] = start[0];
  x[1] = start[1];
  for (let t = 0; t < steps; t++) {
    evaluate(c, x[2 * t], x[2 * t + 1], true);
    x[2 * t + 2] = clip01(x[2 * t] + learningRate * OUT[O_G1]);
    x[2 * t + 3] = clip01(x[2 * t + 1] + learningRate * OUT[O_G2]);
  }
  const { V, J } = cloud(mdp, x);
  return { x, V, J };
}
