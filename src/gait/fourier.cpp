#include "koma/gait/fourier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unsupported/Eigen/FFT>

#include "koma/core/error.hpp"

namespace koma::gait {

void FourierSettings::validate() const {
  if (harmonics < 1 || harmonics > 1000)
    throw Error(ErrorCode::invalid_settings, "harmonics", fmt::format("{} must be in 1..1000", harmonics));
}

void Gait::validate() const {
  basis.validate();
  auto bad = [](std::string what, std::string msg) { throw Error(ErrorCode::bad_data, std::move(what), std::move(msg)); };
  if (harmonics < 1) bad("harmonics", fmt::format("{} must be >= 1", harmonics));
  if (coefficients.rows() != basis.channel_count() || coefficients.cols() != harmonics + 1)
    bad("coefficients", fmt::format("{} x {} must be {} channels x {} (DC + harmonics)", coefficients.rows(),
                                    coefficients.cols(), basis.channel_count(), harmonics + 1));
  if (!coefficients.allFinite()) bad("coefficients", "must be finite");
  if (reference_channel < kRootChannels || reference_channel >= basis.channel_count())
    bad("reference_channel", fmt::format("{} is not a joint channel", reference_channel));
  if (!std::isfinite(reference_phase)) bad("reference_phase", "must be finite");
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

Gait fourier_analyze(const GaitCycle& cycle, const FourierSettings& settings) {
  settings.validate();
  const int m = static_cast<int>(cycle.samples.cols());
  const int k_max = settings.harmonics;
  if (2 * k_max >= m)
    throw Error(ErrorCode::invalid_settings, "harmonics",
                fmt::format("{} harmonics need more than {} samples per cycle (have {})", k_max, 2 * k_max, m));
  const int rows = static_cast<int>(cycle.samples.rows());
  Gait g;
  g.basis = cycle.basis;
  g.harmonics = k_max;
  g.coefficients.resize(rows, k_max + 1);
  Eigen::FFT<double> fft;
  std::vector<double> in(m);
  std::vector<std::complex<double>> out;
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < m; ++i) in[i] = cycle.samples(r, i);
    fft.fwd(out, in);
    g.coefficients(r, 0) = std::complex<double>(out[0].real() / m, 0.0);
    for (int k = 1; k <= k_max; ++k) g.coefficients(r, k) = 2.0 * out[k] / static_cast<double>(m);
  }
  g.reference_channel = choose_reference(g.basis, g.coefficients, settings.reference_joint);
  const std::complex<double> c1 = g.coefficients(g.reference_channel, 1);
  g.reference_phase = std::abs(c1) > 1e-12 ? std::arg(c1) : 0.0;
  for (int k = 1; k <= k_max; ++k)
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
  if (a.harmonics != b.harmonics)
    throw Error(ErrorCode::mismatch, "harmonics", fmt::format("{} vs {}", a.harmonics, b.harmonics));
  if (a.reference_channel != b.reference_channel)
    throw Error(ErrorCode::mismatch, "reference_channel",
                fmt::format("phases are relative to different channels (rows {} vs {})", a.reference_channel,
                            b.reference_channel));
}

double coefficient_distance(const Gait& a, const Gait& b) {
  require_compatible(a, b);
  double sum = 0;
  for (int j = 0; j < a.basis.skeleton.joint_count(); ++j)
    sum += quat_log(a.basis.mean_rotations[j].conjugate() * b.basis.mean_rotations[j]).squaredNorm();
  for (Eigen::Index r = kRootChannels; r < a.coefficients.rows(); ++r) {
    sum += std::norm(a.coefficients(r, 0) - b.coefficients(r, 0));
    for (int k = 1; k <= a.harmonics; ++k) sum += 0.5 * std::norm(a.coefficients(r, k) - b.coefficients(r, k));
  }
  return std::sqrt(sum);
}

}  // namespace koma::gait
