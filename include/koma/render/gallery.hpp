// A self-contained HTML page that shows a folder of results: videos play inline, PNG/SVG/GIF
// images are shown, motion and data files (BVH, glTF, CSV, JSON) are linked.
#pragma once

#include <span>
#include <string>

namespace koma::render {

/// The page for `files` (names relative to the page's folder, shown in the given order; the
/// caller lists the folder). Names are HTML-escaped and URL-encoded. `title` heads the page and
/// `note` (plain text, may be empty) is shown under it. Files named index.html or starting with
/// '.' are skipped. Pure: returns the HTML text.
std::string gallery_html(std::span<const std::string> files, const std::string& title, const std::string& note);

}  // namespace koma::render
