// The dashboard's documents, compiled into the binary so `overhead serve` needs no files beside it:
// the page (HTML), its style sheet and its script. They are three documents, not one, so the page
// can be served under a Content-Security-Policy that allows no inline script or style at all.
#pragma once

#include <string_view>

namespace overhead::serve {

// The page: tables whose cells the script fills from GET /metrics, and a token form.
[[nodiscard]] std::string_view dashboard_html();
// Its style sheet (served at /dashboard.css).
[[nodiscard]] std::string_view dashboard_css();
// Its script (served at /dashboard.js; defined in dashboard_script.cpp).
[[nodiscard]] std::string_view dashboard_js();

}  // namespace overhead::serve
