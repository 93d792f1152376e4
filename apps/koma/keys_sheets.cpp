#include "keys_sheets.hpp"

#include <fmt/format.h>

#include "koma/core/fk.hpp"
#include "koma/render/sheet.hpp"
#include "koma/toon/video.hpp"

namespace koma::cli {

namespace {

// The spacing marks of the exposure sheet: keys circled, each gap's chart with its inbetweens' numbers.
render::SheetSpacing sheet_spacing(const keys::Spacing& sp) {
  render::SheetSpacing out;
  for (const keys::GapSpacing& g : sp.gaps) out.charts.push_back({g.start, g.end, {}, {}});
  for (size_t d = 0; d < sp.drawings.size(); ++d) {
    const keys::Drawing& dr = sp.drawings[d];
    if (dr.kind == keys::DrawingKind::key) {
      out.key_drawings.push_back(static_cast<int>(d) + 1);
    } else {
      out.charts[static_cast<size_t>(dr.gap)].ticks.push_back(dr.chart);
      out.charts[static_cast<size_t>(dr.gap)].drawings.push_back(static_cast<int>(d) + 1);
    }
  }
  return out;
}

}  // namespace

KeySheets render_key_sheets(const Motion& held, const std::shared_ptr<const io::GltfScene>& character,
                            const keys::KeySelection& selection, const std::optional<keys::Spacing>& spacing,
                            const std::string& label, bool contact, bool xsheet, toon::Smear smear) {
  KeySheets out;
  const std::vector<int> drawings = spacing ? spacing->drawing_frames() : keys::drawing_frames(selection);
  if (contact) {
    // The held motion shows, on each drawing's first frame, exactly the pose that drawing holds
    // (with layers: each layer's latest key), so the sheet shows what was written.
    render::ContactSheetSettings cs;
    cs.frame_rate = held.frame_rate;
    cs.title = fmt::format("Key poses - {} ({} drawings)", label, drawings.size());
    const WorldPoses poses = forward_kinematics(held);
    const auto why = toon::unavailable_reason();
    if (!why) {
      toon::ToonClip clip{held, toon::make_character(held, character, label)};
      for (const auto& w : clip.character.warnings) fmt::print(stderr, "koma: warning: {}\n", w);
      toon::ToonStyle style;
      style.smear = smear;
      out.contact = toon::render_contact_sheet(clip, poses, drawings, cs, style);
    } else {
      fmt::print(stderr, "koma: warning: the toon look needs OpenGL: {}; the contact sheet is drawn as sticks\n", *why);
      out.contact = render::render_contact_sheet(held.skeleton, poses, drawings, cs);
    }
  }
  if (xsheet) {
    render::ExposureSheetSettings xs;
    xs.frame_rate = held.frame_rate;
    xs.title = fmt::format("Exposure sheet - {}", label);
    const std::vector<int> numbers = drawing_numbers(drawings, held.frame_count);
    out.xsheet = spacing ? render::render_exposure_sheet(numbers, xs, sheet_spacing(*spacing))
                         : render::render_exposure_sheet(numbers, xs);
  }
  return out;
}

}  // namespace koma::cli
