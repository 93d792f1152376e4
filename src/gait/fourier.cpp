#include "koma/gait/fourier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unsupported/Eigen/FFT>

#include "koma/core/error.hpp"

namespace koma::gait {

void FourierSettings::validate() const {
  auto bad = [](const char* field, std::string msg) { throw Error(ErrorCode::invalid_settings, field, std::move(msg)); };
  if (harmonics < 0 || harmonics > 1000) bad("harmonics", fmt::format("{} must be 0 (per channel) or in 1..1000", harmonics));
  if (!(tolerance > 0 && std::isfinite(tolerance))) bad("tolerance", fmt::format("{} rad must be finite and > 0", tolerance));
  if (!(height_tolerance > 0 && std::isfinite(height_tolerance)))
    bad("height_tolerance", fmt::format("{} m must be finite and > 0", height_tolerance));
  if (!(speed_tolerance > 0 && std::isfinite(speed_tolerance)))
    bad("speed_tolerance", fmt::format("{} m/s must be finite and > 0", speed_tolerance));
  if (max_harmonics < 1 || max_harmonics > 1000) bad("max_harmonics", fmt::format("{} must be in 1..1000", max_harmonics));
}

void Gait::validate() const {
  basis.validate();
  auto bad = [](std::string what, std::string msg) { throw Error(ErrorCode::bad_data, std::move(what), std::move(msg)); };
  if (harmonics < 1) bad("harmonics", fmt::format("{} must be >= 1", harmonics));
  if (coefficients.rows() != basis.channel_count() || coefficients.cols() != harmonics + 1)
    bad("coefficients", fmt::format("{} x {} must be {} channels x {} (DC + harmonics)", coefficients.rows(),
                                    coefficients.cols(), basis.channel_count(), harmonics + 1));
  if (!coefficients.allFinite()) bad("coefficients", "must be finite");
  if (!channel_harmonics.empty()) {
    if (static_cast<Eigen::Index>(channel_harmonics.size()) != coefficients.rows())
      bad("channel_harmonics", fmt::format("{} entries for {} channels", channel_harmonics.size(), coefficients.rows()));
    for (size_t r = 0; r < channel_harmonics.size(); ++r) {
      const int k = channel_harmonics[r];
      if (k < 0 || k > harmonics) bad("channel_harmonics", fmt::format("row {}: {} is not in 0..{}", r, k, harmonics));
      const auto row = static_cast<Eigen::Index>(r);
      if (k < harmonics && coefficients.row(row).tail(harmonics - k).cwiseAbs().maxCoeff() != 0.0)
        bad("coefficients", fmt::format("row {} keeps {} harmonics but has a coefficient above them", r, k));
    }
  }
  if (reference_channel < kRootChannels || reference_channel >= basis.channel_count())
    bad("reference_channel", fmt::format("{} is not a joint channel", reference_channel));
  if (!std::isfinite(reference_phase)) bad("reference_phase", "must be finite");
}

int channel_harmonic_count(const Gait& gait, int row) {
  return gait.channel_harmonics.empty() ? gait.harmonics : gait.channel_harmonics[static_cast<size_t>(row)];
}

Gait padded(const Gait& gait, int harmonics) {
  KOMA_ASSERT(harmonics >= gait.harmonics);
  Gait out = gait;
  if (harmonics == gait.harmonics) return out;
  out.channel_harmonics.resize(static_cast<size_t>(gait.coefficients.rows()));
  for (int r = 0; r < gait.coefficients.rows(); ++r) out.channel_harmonics[static_cast<size_t>(r)] = channel_harmonic_count(gait, r);
  out.coefficients = Eigen::MatrixXcd::Zero(gait.coefficients.rows(), harmonics + 1);
  out.coefficients.leftCols(gait.harmonics + 1) = gait.coefficients;
  out.harmonics = harmonics;
  return out;
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int choose_reference(const GaitBasis& b, const Eigen::MatrixXcd& c, const std::string& name) {
  const Skeleton& sk = b.skeleton;
  int joint = -1;
  if (!name.empty()) {
    joint = sk.find(name);
    if (joint < 0) throw Error(ErrorCode::invalid_settings, "reference_joint", fmt::format("no joint named '{}'", name));
  } else {
    for (int j = 0; j < sk.joint_count() && joint < 0; ++j) {
      const std::string n = lower(sk.names[j]);
      for (const char* key : {"upleg", "upperleg", "up_leg", "upper_leg", "thigh", "femur"})
        if (n.find(key) != std::string::npos) joint = j;
    }
  }
  int best = -1;
  double best_amp = -1;
  for (int j = 0; j < sk.joint_count(); ++j) {
    if (joint >= 0 && j != joint) continue;
    for (int a = 0; a < 3; ++a) {
      const double amp = std::abs(c(joint_channel(j, a), 1));
      if (amp > best_amp * (1 + 1e-9)) best_amp = amp, best = joint_channel(j, a);
    }
  }
  return best;
}

}  // namespace

namespace {

// Per row, the one-sided power of every harmonic k = 0 .. m/2 of the cycle (Parseval weights, so
// the sum over k > K is the mean square of the part above K).
std::vector<std::vector<double>> power_spectra(const Eigen::MatrixXd& samples) {
  const int m = static_cast<int>(samples.cols());
  Eigen::FFT<double> fft;
  std::vector<double> in(m);
  std::vector<std::complex<double>> spec;
  std::vector<std::vector<double>> out(static_cast<size_t>(samples.rows()));
  for (int r = 0; r < samples.rows(); ++r) {
    for (int i = 0; i < m; ++i) in[i] = samples(r, i);
    fft.fwd(spec, in);
    auto& p = out[static_cast<size_t>(r)];
    p.assign(static_cast<size_t>(m / 2 + 1), 0.0);
    for (int k = 1; 2 * k <= m; ++k) p[k] = (2 * k == m ? 1.0 : 2.0) * std::norm(spec[k]) / (static_cast<double>(m) * m);
  }
  return out;
}

// RMS of everything above harmonic k in a power spectrum.
double tail_rms(const std::vector<double>& p, int k) {
  double sum = 0;
  for (size_t h = static_cast<size_t>(k) + 1; h < p.size(); ++h) sum += p[h];
  return std::sqrt(sum);
}

// The smallest K in 1..cap whose tail is within `tol`, else cap.
int smallest_k(const std::vector<double>& p, double tol, int cap) {
  for (int k = 1; k < cap; ++k)
    if (tail_rms(p, k) <= tol) return k;
  return cap;
}

// RMS rotation angle between joint j of the cycle and the K_c truncation of its spectrum.
double joint_truncation_rms(const GaitCycle& cycle, const Eigen::MatrixXcd& full, int j, const int* k) {
  const int m = static_cast<int>(cycle.samples.cols());
  double sum = 0;
  for (int i = 0; i < m; ++i) {
    const double phi = 2 * kPi * i / m;
    Vec3 v;
    for (int a = 0; a < 3; ++a) {
      const int r = joint_channel(j, a);
      double x = full(r, 0).real();
      for (int h = 1; h <= k[a]; ++h) x += (full(r, h) * std::polar(1.0, h * phi)).real();
      v[a] = x;
    }
    const Quat qa = joint_rotation(cycle.basis, j, cycle.samples.block<3, 1>(joint_channel(j, 0), i));
    const Quat qb = joint_rotation(cycle.basis, j, v);
    const double angle = 2 * std::asin(std::min(1.0, (qa.conjugate() * qb).vec().norm()));
    sum += angle * angle;
  }
  return std::sqrt(sum / m);
}

// K_c per channel by the settings' tolerances (see FourierSettings). `full` holds the cycle's
// absolute-phase coefficients up to `cap`.
std::vector<int> choose_harmonics(const GaitCycle& cycle, const Eigen::MatrixXcd& full, const FourierSettings& s, int cap) {
  const auto p = power_spectra(cycle.samples);
  const int rows = static_cast<int>(cycle.samples.rows());
  std::vector<int> k(static_cast<size_t>(rows), cap);
  k[0] = smallest_k(p[0], s.height_tolerance, cap);
  for (int r = 1; r < kRootChannels; ++r) k[static_cast<size_t>(r)] = smallest_k(p[static_cast<size_t>(r)], s.speed_tolerance, cap);
  const double per_channel = s.tolerance / std::sqrt(3.0);
  for (int j = 0; j < cycle.basis.skeleton.joint_count(); ++j) {
    int* kj = &k[static_cast<size_t>(joint_channel(j, 0))];
    for (int a = 0; a < 3; ++a) kj[a] = smallest_k(p[static_cast<size_t>(joint_channel(j, a))], per_channel, cap);
    // The split is exact in channel space; the rotation angle differs slightly: top up.
    while (joint_truncation_rms(cycle, full, j, kj) > s.tolerance) {
      int best = -1;
      double most = 0;
      for (int a = 0; a < 3; ++a) {
        const double t = tail_rms(p[static_cast<size_t>(joint_channel(j, a))], kj[a]);
        if (kj[a] < cap && t > most) most = t, best = a;
      }
      if (best < 0) break;  // at the cap: reported by reconstruction_error()
      ++kj[best];
    }
  }
  {  // Chains: a joint keeps the harmonics of every joint below it, the root channels the root's.
    const Skeleton& sk = cycle.basis.skeleton;
    std::vector<int> below(static_cast<size_t>(sk.joint_count()), 0);  // most K among a joint's descendants
    for (int j = sk.joint_count() - 1; j >= 0; --j) {
      int own = 0;
      for (int a = 0; a < 3; ++a) own = std::max(own, k[static_cast<size_t>(joint_channel(j, a))]);
      const int parent = sk.parents[j];
      if (parent >= 0) below[static_cast<size_t>(parent)] = std::max({below[static_cast<size_t>(parent)], below[static_cast<size_t>(j)], own});
    }
    for (int j = 0; j < sk.joint_count(); ++j)
      for (int a = 0; a < 3; ++a) {
        int& kc = k[static_cast<size_t>(joint_channel(j, a))];
        kc = std::max(kc, below[static_cast<size_t>(j)]);
      }
    const int root = cycle.basis.root_joint;
    for (int r = 0; r < kRootChannels; ++r)
      for (int a = 0; a < 3; ++a) k[static_cast<size_t>(r)] = std::max(k[static_cast<size_t>(r)], k[static_cast<size_t>(joint_channel(root, a))]);
  }
  return k;
}

}  // namespace

Gait fourier_analyze(const GaitCycle& cycle, const FourierSettings& settings) {
  settings.validate();
  const int m = static_cast<int>(cycle.samples.cols());
  const bool fixed = settings.harmonics > 0;
  if (fixed && 2 * settings.harmonics >= m)
    throw Error(ErrorCode::invalid_settings, "harmonics",
                fmt::format("{} harmonics need more than {} samples per cycle (have {})", settings.harmonics,
                            2 * settings.harmonics, m));
  const int cap = fixed ? settings.harmonics : std::min(settings.max_harmonics, (m - 1) / 2);
  if (cap < 1)
    throw Error(ErrorCode::invalid_settings, "samples", fmt::format("{} samples per cycle hold no harmonic", m));
  const int rows = static_cast<int>(cycle.samples.rows());
  Eigen::MatrixXcd full(rows, cap + 1);
  Eigen::FFT<double> fft;
  std::vector<double> in(m);
  std::vector<std::complex<double>> out;
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < m; ++i) in[i] = cycle.samples(r, i);
    fft.fwd(out, in);
    full(r, 0) = std::complex<double>(out[0].real() / m, 0.0);
    for (int k = 1; k <= cap; ++k) full(r, k) = 2.0 * out[k] / static_cast<double>(m);
  }
  Gait g;
  g.basis = cycle.basis;
  g.channel_harmonics = fixed ? std::vector<int>(static_cast<size_t>(rows), cap) : choose_harmonics(cycle, full, settings, cap);
  g.harmonics = *std::max_element(g.channel_harmonics.begin(), g.channel_harmonics.end());
  g.coefficients = Eigen::MatrixXcd::Zero(rows, g.harmonics + 1);
  for (int r = 0; r < rows; ++r) g.coefficients.row(r).head(g.channel_harmonics[static_cast<size_t>(r)] + 1) =
                                     full.row(r).head(g.channel_harmonics[static_cast<size_t>(r)] + 1);
  g.reference_channel = choose_reference(g.basis, g.coefficients, settings.reference_joint);
  const std::complex<double> c1 = g.coefficients(g.reference_channel, 1);
  g.reference_phase = std::abs(c1) > 1e-12 ? std::arg(c1) : 0.0;
  for (int k = 1; k <= g.harmonics; ++k)
    g.coefficients.col(k) *= std::polar(1.0, -k * g.reference_phase);
  return g;
}

Gait analyze_gait(const Motion& motion, const CycleSettings& cycle, const FourierSettings& fourier) {
  fourier.validate();
  return fourier_analyze(extract_cycle(motion, cycle), fourier);
}

Eigen::VectorXd evaluate(const Gait& gait, double phi, double stride) {
  const Eigen::MatrixXcd& c = gait.coefficients;
  Eigen::VectorXd x = c.col(0).real();
  for (int k = 1; k <= gait.harmonics; ++k) {
    const std::complex<double> e = std::polar(stride, k * phi);
    x += (c.col(k) * e).real();
  }
  return x;
}

Eigen::MatrixXd reconstruct_cycle(const Gait& gait, int samples) {
  KOMA_ASSERT(samples >= 1);
  Eigen::MatrixXd out(gait.coefficients.rows(), samples);
  for (int i = 0; i < samples; ++i)
    out.col(i) = evaluate(gait, 2 * kPi * i / samples + gait.reference_phase);
  return out;
}

ReconstructionError reconstruction_error(const GaitCycle& cycle, const Gait& gait) {
  if (cycle.samples.rows() != gait.coefficients.rows())
    throw Error(ErrorCode::mismatch, "gait", fmt::format("{} channels vs the cycle's {}", gait.coefficients.rows(),
                                                         cycle.samples.rows()));
  const int m = static_cast<int>(cycle.samples.cols());
  const Eigen::MatrixXd rec = reconstruct_cycle(gait, m);
  const int nj = cycle.basis.skeleton.joint_count();
  ReconstructionError err;
  err.joint_rms.assign(nj, 0.0);
  for (int j = 0; j < nj; ++j) {
    double sum = 0;
    for (int i = 0; i < m; ++i) {
      const Quat a = joint_rotation(cycle.basis, j, cycle.samples.block<3, 1>(joint_channel(j, 0), i));
      const Quat b = joint_rotation(gait.basis, j, rec.block<3, 1>(joint_channel(j, 0), i));
      const double angle = 2 * std::asin(std::min(1.0, (a.conjugate() * b).vec().norm()));
      sum += angle * angle;
    }
    err.joint_rms[j] = std::sqrt(sum / m);
    if (err.joint_rms[j] > err.worst_rms) err.worst_rms = err.joint_rms[j], err.worst_joint = j;
  }
  err.height_rms = std::sqrt((cycle.samples.row(0) - rec.row(0)).squaredNorm() / m);
  return err;
}

std::vector<double> energy_above(const GaitCycle& cycle, int harmonics) {
  if (harmonics < 0) throw Error(ErrorCode::invalid_settings, "harmonics", fmt::format("{} must be >= 0", harmonics));
  const int m = static_cast<int>(cycle.samples.cols());
  const int nj = cycle.basis.skeleton.joint_count();
  std::vector<double> out(nj, 0.0);
  Eigen::FFT<double> fft;
  std::vector<double> in(m);
  std::vector<std::complex<double>> spec;
  for (int j = 0; j < nj; ++j) {
    double sum = 0;  // mean square over the cycle of the part above K (Parseval, one-sided spectrum)
    for (int a = 0; a < 3; ++a) {
      for (int i = 0; i < m; ++i) in[i] = cycle.samples(joint_channel(j, a), i);
      fft.fwd(spec, in);
      for (int k = harmonics + 1; 2 * k <= m; ++k)
        sum += (2 * k == m ? 1.0 : 2.0) * std::norm(spec[k]) / (static_cast<double>(m) * m);
    }
    out[j] = std::sqrt(sum);
  }
  return out;
}

std::vector<double> channel_energy_above(const GaitCycle& cycle, std::span<const int> harmonics) {
  if (static_cast<Eigen::Index>(harmonics.size()) != cycle.samples.rows())
    throw Error(ErrorCode::invalid_settings, "harmonics",
                fmt::format("{} entries for {} channels", harmonics.size(), cycle.samples.rows()));
  const auto p = power_spectra(cycle.samples);
  std::vector<double> out(harmonics.size());
  for (size_t r = 0; r < harmonics.size(); ++r) {
    if (harmonics[r] < 0) throw Error(ErrorCode::invalid_settings, "harmonics", fmt::format("row {}: {} must be >= 0", r, harmonics[r]));
    out[r] = tail_rms(p[r], harmonics[r]);
  }
  return out;
}

std::vector<double> raw_energy_above(const Motion& motion, const GaitCycle& cycle, const Gait& gait) {
  const int nj = motion.joint_count();
  if (cycle.basis.skeleton.joint_count() != nj || gait.basis.skeleton.joint_count() != nj)
    throw Error(ErrorCode::mismatch, "gait",
                fmt::format("motion has {} joints, cycle {}, gait {}", nj, cycle.basis.skeleton.joint_count(),
                            gait.basis.skeleton.joint_count()));
  const MotionChannels ch = motion_channels(motion, cycle.basis.angles);
  std::vector<double> sum(static_cast<size_t>(nj), 0.0);
  long frames = 0;
  for (double s : cycle.starts) {
    const int a = static_cast<int>(std::lround(s));
    const int n = std::min(static_cast<int>(std::lround(s + cycle.period_frames)), motion.frame_count) - a;
    if (a < 0 || n < 4) continue;
    Eigen::MatrixXd fit(ch.values.rows(), n);
    for (int r = kRootChannels; r < ch.values.rows(); ++r) {
      const int k_max = std::min(channel_harmonic_count(gait, r), (n - 3) / 2);
      Eigen::MatrixXd basis(n, 2 + 2 * k_max);
      for (int i = 0; i < n; ++i) {
        basis(i, 0) = 1, basis(i, 1) = static_cast<double>(i) / n - 0.5;
        for (int h = 1; h <= k_max; ++h) {
          basis(i, 2 * h) = std::cos(2 * kPi * h * i / n);
          basis(i, 2 * h + 1) = std::sin(2 * kPi * h * i / n);
        }
      }
      const Eigen::VectorXd y = ch.values.row(r).segment(a, n).transpose();
      fit.row(r) = (basis * basis.colPivHouseholderQr().solve(y)).transpose();
    }
    for (int j = 0; j < nj; ++j)
      for (int i = 0; i < n; ++i) {
        const Quat p = joint_rotation(ch.basis, j, ch.values.block<3, 1>(joint_channel(j, 0), a + i));
        const Quat q = joint_rotation(ch.basis, j, fit.block<3, 1>(joint_channel(j, 0), i));
        sum[static_cast<size_t>(j)] += std::pow(2 * std::asin(std::min(1.0, (p.conjugate() * q).vec().norm())), 2);
      }
    frames += n;
  }
  for (double& v : sum) v = frames > 0 ? std::sqrt(v / static_cast<double>(frames)) : 0.0;
  return sum;
}

std::vector<int> joint_harmonics(const Gait& gait) {
  std::vector<int> out(static_cast<size_t>(gait.basis.skeleton.joint_count()), 0);
  for (int j = 0; j < gait.basis.skeleton.joint_count(); ++j)
    for (int a = 0; a < 3; ++a) out[static_cast<size_t>(j)] = std::max(out[static_cast<size_t>(j)], channel_harmonic_count(gait, joint_channel(j, a)));
  return out;
}

std::vector<std::vector<double>> joint_amplitudes(const Gait& gait) {
  const int nj = gait.basis.skeleton.joint_count();
  std::vector<std::vector<double>> out(nj, std::vector<double>(gait.harmonics, 0.0));
  for (int j = 0; j < nj; ++j)
    for (int k = 1; k <= gait.harmonics; ++k)
      out[j][k - 1] = std::sqrt(gait.coefficients.block(joint_channel(j, 0), k, 3, 1).squaredNorm());
  return out;
}

void require_compatible(const Gait& a, const Gait& b) {
  require_same_topology(a.basis.skeleton, b.basis.skeleton);
  if (a.basis.angles != b.basis.angles)
    throw Error(ErrorCode::mismatch, "angles",
                fmt::format("gaits use different joint channels ({} vs {})", to_string(a.basis.angles),
                            to_string(b.basis.angles)));
  if (a.reference_channel != b.reference_channel)
    throw Error(ErrorCode::mismatch, "reference_channel",
                fmt::format("phases are relative to different channels (rows {} vs {})", a.reference_channel,
                            b.reference_channel));
}

double coefficient_distance(const Gait& a, const Gait& b) {
  require_compatible(a, b);
  const int k = std::max(a.harmonics, b.harmonics);
  const Eigen::MatrixXcd ca = padded(a, k).coefficients, cb = padded(b, k).coefficients;
  double sum = 0;
  for (int j = 0; j < a.basis.skeleton.joint_count(); ++j)
    sum += quat_log(a.basis.mean_rotations[j].conjugate() * b.basis.mean_rotations[j]).squaredNorm();
  for (Eigen::Index r = kRootChannels; r < ca.rows(); ++r) {
    sum += std::norm(ca(r, 0) - cb(r, 0));
    for (int h = 1; h <= k; ++h) sum += 0.5 * std::norm(ca(r, h) - cb(r, h));
  }
  return std::sqrt(sum);
}

}  // namespace koma::gait
