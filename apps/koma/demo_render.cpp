#include "demo_render.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/render/compare.hpp"
#include "koma/render/encode.hpp"
#include "koma/render/gallery.hpp"
#include "koma/render/sheet.hpp"
#include "koma/toon/video.hpp"

namespace koma::cli {

namespace fs = std::filesystem;

std::vector<std::string> render_demo_outputs(const Motion& motion, const fs::path& out_dir,
                                             const std::vector<int>& kept_frames, const std::string& label,
                                             bool progress) {
  constexpr double kRate = 24.0;
  const Motion m = resample(motion, kRate);
  const WorldPoses poses = forward_kinematics(m);
  std::vector<std::string> written;

  // The toon look (cel-shaded mannequin) when OpenGL can run; else the stick figures, said once.
  const auto why = toon::unavailable_reason();
  if (why && progress)
    fmt::print(stderr, "koma: warning: the toon look needs OpenGL: {}; drawing stick figures\n", *why);
  toon::ToonClip smooth{m, toon::make_character(m, nullptr, "walk")};
  toon::ToonClip held{toon::held_motion(m, std::vector<int>(static_cast<size_t>(m.joint_count()), 0), {kept_frames}),
                      smooth.character};

  render::CameraSettings persp;
  persp.view = render::CameraView::perspective;
  render::Comparison alone;
  alone.frame_rate = kRate;
  alone.result = {m.skeleton, poses, "koma sample character"};
  {
    Progress bar("walk.mp4", progress);
    const auto on = [&](double f) { bar.update(f); };
    if (why) render::write_comparison_video(out_dir / "walk.mp4", alone, persp, {}, {}, {}, on);
    else toon::write_comparison_video(out_dir / "walk.mp4", alone, smooth, nullptr, persp, {}, {}, {}, on);
  }
  written.push_back("walk.mp4");

  render::Comparison cmp;
  cmp.frame_rate = kRate;
  cmp.kept_frames = kept_frames;
  cmp.original = render::Clip{m.skeleton, poses, "original (smooth)"};
  cmp.result = {m.skeleton, render::hold_poses(poses, kept_frames), label};
  render::CameraSettings side;
  side.view = render::CameraView::side;
  render::CompareSettings cs;
  cs.onion_skin = 2;
  {
    Progress bar("side_by_side.mp4", progress);
    const auto on = [&](double f) { bar.update(f); };
    if (why) render::write_comparison_video(out_dir / "side_by_side.mp4", cmp, side, {}, cs, {}, on);
    else toon::write_comparison_video(out_dir / "side_by_side.mp4", cmp, held, &smooth, side, {}, cs, {}, on);
  }
  written.push_back("side_by_side.mp4");

  render::ContactSheetSettings sheet;
  sheet.title = fmt::format("Key poses - {} ({} drawings)", label, kept_frames.size());
  render::write_png(out_dir / "contact_sheet.png",
                    why ? render::render_contact_sheet(m.skeleton, poses, kept_frames, sheet)
                        : toon::render_contact_sheet(held, poses, kept_frames, sheet));
  written.push_back("contact_sheet.png");

  render::ExposureSheetSettings xs;
  xs.title = fmt::format("Exposure sheet - {}", label);
  render::write_png(out_dir / "xsheet.png",
                    render::render_exposure_sheet(drawing_numbers(kept_frames, m.frame_count), xs));
  written.push_back("xsheet.png");
  return written;
}

void write_demo_index(const fs::path& out_dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(out_dir)) {
    if (e.is_regular_file()) files.push_back(e.path().filename().string());
  }
  // The web viewer (koma view) is a folder of its own.
  if (fs::is_regular_file(out_dir / "viewer" / "index.html")) files.push_back("viewer/index.html");
  // Videos and sheets first (what an animator looks at), then the rest by name.
  auto rank = [](const std::string& f) {
    if (f == "viewer/index.html") return -1;
    if (f == "side_by_side.mp4") return 0;
    if (f.ends_with(".mp4")) return 1;
    if (f == "contact_sheet.png") return 2;
    return 3;
  };
  std::sort(files.begin(), files.end(), [&](const std::string& a, const std::string& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  write_file_atomic(out_dir / "index.html",
                    render::gallery_html(files, "koma demo",
                                         "The built-in procedural character (a walk, then a jump), made and "
                                         "processed by koma. Left limbs vermilion, right limbs cobalt."));
}

}  // namespace koma::cli
