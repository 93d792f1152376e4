// `koma keys IN.mp4 -o OUT.mp4`: parsing and reporting only; the work is koma::video.
#include <fmt/format.h>

#include <memory>
#include <sstream>

#include "common.hpp"
#include "keys_video.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/render/encode.hpp"
#include "koma/video/decode.hpp"
#include "koma/video/flow.hpp"
#include "koma/video/select.hpp"

namespace koma::cli {

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

// "auto" or "#ff0000,#00ff00" (the '#' is optional).
std::vector<video::Rgb> parse_colours(const std::string& text) {
  std::vector<video::Rgb> out;
  if (text == "auto") return out;
  for (std::string c : split(text, ',')) {
    if (!c.empty() && c[0] == '#') c = c.substr(1);
    if (c.size() != 6 || c.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      throw Error(ErrorCode::invalid_settings, "--regions", fmt::format("'{}' is not a colour; expected auto or #rrggbb,#rrggbb", c));
    }
    const unsigned long v = std::stoul(c, nullptr, 16);
    out.push_back({static_cast<std::uint8_t>(v >> 16), static_cast<std::uint8_t>((v >> 8) & 255), static_cast<std::uint8_t>(v & 255)});
  }
  if (out.empty()) throw Error(ErrorCode::invalid_settings, "--regions", "no colours given");
  return out;
}

}  // namespace

void run_video_keys(const VideoKeysArgs& a) {
  if (!a.skeleton_only.empty()) {
    throw Error(ErrorCode::invalid_settings, a.skeleton_only, "needs a skeleton; it does not apply to video input");
  }
  video::AnalysisSettings as;
  as.regions.colours = parse_colours(a.regions);
  const auto flow = video::parse_flow_method(a.flow);
  if (!flow) throw Error(ErrorCode::invalid_settings, "--flow", fmt::format("unknown flow '{}'; expected dis or farneback", a.flow));
  as.flow.method = *flow;
  as.validate();

  video::VideoKeySettings st;
  const auto sel = keys::parse_selector(a.selector);
  if (!sel) throw Error(ErrorCode::invalid_settings, "--selector", fmt::format("unknown selector '{}'", a.selector));
  st.selector = *sel;
  if (a.metric_given) {
    const auto m = keys::parse_metric(a.metric);
    if (!m) throw Error(ErrorCode::invalid_settings, "--metric", fmt::format("unknown metric '{}'", a.metric));
    st.metric = *m;
  }
  const auto in = keys::parse_interpolation(a.interp);
  if (!in) throw Error(ErrorCode::invalid_settings, "--interp", fmt::format("unknown interpolation '{}'", a.interp));
  st.interpolation = *in;
  st.keys = a.keys;
  st.on = a.on;
  st.max_error = a.max_error;
  st.constraints.min_hold = a.min_hold;
  st.constraints.max_hold = a.max_hold;
  if (a.max_hold_given && a.max_hold == 0) st.max_hold_seconds = 0;  // explicitly unlimited
  for (const std::string& f : a.lock.empty() ? std::vector<std::string>{} : split(a.lock, ',')) {
    try {
      st.constraints.locked.push_back(std::stoi(f));
    } catch (const std::logic_error&) {
      throw Error(ErrorCode::invalid_settings, "--lock", fmt::format("'{}' is not a frame number", f));
    }
  }
  st.anneal.seed = a.seed;
  st.anneal.iterations = a.iterations;
  const auto ev = keys::parse_anneal_evaluation(a.anneal_eval);
  if (!ev) throw Error(ErrorCode::invalid_settings, "--anneal-eval", fmt::format("unknown evaluation '{}'", a.anneal_eval));
  st.anneal.evaluation = *ev;
  if (a.schedule == "linear") st.anneal.schedule = keys::Schedule::linear;
  else if (a.schedule != "geometric") throw Error(ErrorCode::invalid_settings, "--schedule", "expected geometric or linear");

  video::DecodeSettings analysis_decode;  // 640 px long side
  video::VideoReader reader(a.input, analysis_decode);
  const video::VideoInfo info = reader.info();
  for (const std::string& w : info.warnings) fmt::print(stderr, "koma: warning: {}\n", w);
  st.output_rate = a.fps == "source" ? 0 : parse_fps_option(a.fps, info.frame_rate, "--fps");
  if (a.ratio > 0) {
    if (!(a.ratio <= 1)) throw Error(ErrorCode::invalid_settings, "--ratio", "must be in (0, 1]");
    const int n_out = video::output_frame_count(std::max(info.frame_count, 2), info.frame_rate, st.output_rate > 0 ? st.output_rate : info.frame_rate);
    st.keys = std::max(2, static_cast<int>(std::lround(a.ratio * n_out)));
  }
  st.validate();
  render::video_format_for(a.output);  // .mp4, .gif or a PNG folder: fail before the long analysis

  Progress progress("video", !a.json);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const video::VideoAnalysis an = video::analyse_video(
      [&](video::Image& im) { return reader.next(im); }, info.frame_rate, as, info.frame_count,
      [&](double f) { progress.update(0.7 * f); });
  const auto t1 = Clock::now();
  const video::VideoKeySelection ks = video::select_video_keys(an, st, [&](double f) { progress.update(0.7 + 0.1 * f); });
  const double seconds_analysis = std::chrono::duration<double>(t1 - t0).count();
  const double seconds_select = std::chrono::duration<double>(Clock::now() - t1).count();
  const std::string report = video::video_report_json(an, ks, st, as, a.input);
  const std::string sheet = video::video_exposure_sheet_csv(ks);

  // Writing: the held video streams from a second decoding pass and hands each key's frame to the
  // contact sheet, which is drawn one row of cells at a time. The sheet, the report and the
  // exposure sheet are staged and appear only once the held video is in place.
  OutputBatch outputs;
  video::DecodeSettings out_decode;
  out_decode.max_side = 1920;
  std::unique_ptr<video::ContactSheetWriter> contact;
  video::KeyFrameSink on_key;
  outputs.write([&] {
    if (!a.contact_sheet.empty()) {
      const auto [w, h] = video::decoded_size(info.width, info.height, out_decode.max_side);
      contact = std::make_unique<video::ContactSheetWriter>(outputs.stage(a.contact_sheet), ks, w, h);
      on_key = [&](const video::Image& frame) { contact->add(frame); };
    }
    video::write_held_video(a.input, a.output, ks, out_decode, render::EncodeSettings{}, on_key,
                            [&](double f) { progress.update(0.8 + 0.2 * f); });
    if (contact) contact->finish();
    if (!a.report.empty()) write_file_atomic(outputs.stage(a.report), report);
    if (!a.xsheet.empty()) write_file_atomic(outputs.stage(a.xsheet), sheet);
  });
  outputs.commit();
  progress.finish();

  if (a.json) {
    print_json({{"input", a.input}, {"output", a.output}, {"report", a.report}, {"xsheet", a.xsheet},
                {"contact_sheet", a.contact_sheet}, {"source_frames", an.frames}, {"source_fps", an.frame_rate},
                {"frames", ks.output_frames}, {"fps", ks.output_rate}, {"tracks", an.tracks.size()},
                {"selector", keys::to_string(st.selector)}, {"metric", keys::to_string(st.metric)},
                {"flow", video::to_string(as.flow.method)}, {"key_count", ks.keys.size()}, {"keys", ks.keys},
                {"key_source_frames", ks.key_sources}, {"error", ks.error},
                {"seconds", {{"analysis", seconds_analysis}, {"select", seconds_select}}}, {"warnings", info.warnings}});
    return;
  }
  fmt::print("koma keys: video {} frames at {:g} fps ({}x{} analysed, {} region tracks)\n", an.frames, an.frame_rate, an.width,
             an.height, an.tracks.size());
  fmt::print("  -> {} keys of {} output frames at {:g} fps ({}, {}, {} flow)\n", ks.keys.size(), ks.output_frames, ks.output_rate,
             keys::to_string(st.selector), keys::to_string(st.metric), video::to_string(as.flow.method));
  fmt::print("  mean squared error {:.4g} frame heights^2\n", ks.error);
  fmt::print("  time: regions and flow {:.2f} s ({:.0f} frames/s), selection {:.3f} s\n", seconds_analysis,
             an.frames / std::max(1e-9, seconds_analysis), seconds_select);
  fmt::print("  wrote {}\n", a.output);
  for (const std::string* p : {&a.contact_sheet, &a.report, &a.xsheet}) {
    if (!p->empty()) fmt::print("  wrote {}\n", *p);
  }
}

}  // namespace koma::cli
