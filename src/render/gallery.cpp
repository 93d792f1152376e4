#include "koma/render/gallery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

namespace koma::render {

namespace {

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string url(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string ext_of(std::string_view name) {
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos) return "";
  std::string e(name.substr(dot + 1));
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

}  // namespace

std::string gallery_html(std::span<const std::string> files, const std::string& title, const std::string& note) {
  std::string videos, images, links;
  for (const std::string& f : files) {
    if (f.empty() || f == "index.html" || f[0] == '.') continue;
    const std::string e = ext_of(f), u = url(f), n = escape(f);
    if (e == "mp4" || e == "webm") {
      videos += fmt::format(
          "<figure><video src=\"{}\" controls loop autoplay muted playsinline></video>"
          "<figcaption><a href=\"{}\">{}</a></figcaption></figure>\n",
          u, u, n);
    } else if (e == "png" || e == "svg" || e == "gif" || e == "jpg" || e == "jpeg") {
      images += fmt::format(
          "<figure><a href=\"{}\"><img src=\"{}\" alt=\"{}\" loading=\"lazy\"></a><figcaption>{}</figcaption>"
          "</figure>\n",
          u, u, n, n);
    } else {
      links += fmt::format("<li><a href=\"{}\">{}</a></li>\n", u, n);
    }
  }
  std::string html = fmt::format(R"(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font: 15px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1320px; padding: 0 16px;
       background: #f5f3ee; color: #222; }}
h1 {{ font-size: 22px; margin-bottom: 4px; }} h2 {{ font-size: 17px; margin-top: 28px; }}
p.note {{ color: #666; margin-top: 0; }}
figure {{ margin: 0 0 20px; background: #fff; padding: 10px; border-radius: 8px; box-shadow: 0 1px 3px #0002; }}
video, img {{ max-width: 100%; display: block; margin: 0 auto; }}
figcaption {{ font-size: 13px; color: #555; margin-top: 6px; }}
.grid {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 16px; }}
</style></head><body>
<h1>{0}</h1>
)",
                                 escape(title));
  if (!note.empty()) html += fmt::format("<p class=\"note\">{}</p>\n", escape(note));
  if (!videos.empty()) html += "<h2>Videos</h2>\n" + videos;
  if (!images.empty()) html += "<h2>Pictures</h2>\n<div class=\"grid\">\n" + images + "</div>\n";
  if (!links.empty()) html += "<h2>Files</h2>\n<ul>\n" + links + "</ul>\n";
  if (videos.empty() && images.empty() && links.empty()) html += "<p>No results yet.</p>\n";
  html += "</body></html>\n";
  return html;
}

}  // namespace koma::render
