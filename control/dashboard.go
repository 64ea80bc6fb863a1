package control

import (
	"embed"
	"io/fs"
	"net/http"
)

// dashboardFiles is the dashboard: one page, a stylesheet and its scripts
// (app.js, events.js, records.js, charts.js, security.js, schemas.js), served as they are (no build
// step, no external assets).
//
//go:embed dashboard
var dashboardFiles embed.FS

// registerDashboardRoutes serves the dashboard at GET / and its assets
// under /dashboard/. The page is a client of the rest of the control API:
// it reads /v1/cluster, /v1/groups, /v1/faults, /v1/transactions,
// /v1/security and /v1/schema-registry,
// follows /v1/events/stream with the server-side filters the events panel
// sets (older events from /v1/events?before=), reads a replica's log from
// .../replicas/{id}/records, and every button is one of the API's POSTs.
func (c cluster) registerDashboardRoutes(mux *http.ServeMux) {
	sub, _ := fs.Sub(dashboardFiles, "dashboard")
	assets := http.StripPrefix("/dashboard/", http.FileServerFS(sub))
	mux.Handle("GET /dashboard/", noSniff(assets))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, sub, "index.html")
	})
}

func noSniff(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}
