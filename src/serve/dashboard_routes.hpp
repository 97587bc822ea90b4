// The dashboard's routes: GET / and /dashboard (the page), /dashboard.css and /dashboard.js, each
// with a Content-Security-Policy that lets the page load only itself and read only this server,
// and an empty /favicon.ico.
#pragma once

namespace overhead::serve::http {
class Routes;
}

namespace overhead::serve {

// The documents are served without the bearer token: they hold no data, and a browser cannot
// attach a token to a page it navigates to. The figures come from /metrics, which still needs the
// token when one is set; the page asks for it and keeps it in memory. Like /metrics they stay
// outside the in-flight limit, so the page loads under load.
void add_dashboard_routes(http::Routes& routes);

}  // namespace overhead::serve
