package report

import (
	"encoding/base64"
	"fmt"
	htmltemplate "html/template"
	"io"
	"strings"
)

var htmlTemplate = htmltemplate.Must(htmltemplate.New("report.html").Funcs(htmltemplate.FuncMap{
	"svg": func(b []byte) htmltemplate.URL {
		return htmltemplate.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(b))
	},
	"join":  strings.Join,
	"plain": winnersPlain,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>concbench run {{.Run.ID}}</title>
<style>
body { font-family: sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.partial { background: #fff3cd; border: 1px solid #e0c060; padding: 0.5rem 1rem; }
.banner { background: #f8d7da; border: 1px solid #d06070; padding: 0.5rem 1rem; font-weight: bold; }
figure { margin: 2rem 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { margin-top: 0.5rem; }
pre { background: #f7f7f7; padding: 0.5rem; overflow-x: auto; }
.notes { font-size: 0.9rem; color: #555; }
</style>
</head>
<body>
<h1>concbench run {{.Run.ID}}</h1>
{{if .Banner}}<p class="banner">{{.Banner}}</p>{{end}}
{{if .Partial}}<p class="partial"><strong>Partial run:</strong> {{.Partial}}.</p>{{end}}
<p>{{.Counts}}.</p>
{{with .Winners}}
<h2>Who wins where</h2>
<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{plain .}}</td>{{end}}</tr>
{{end}}</table>
<p class="notes">{{.Note}}</p>
{{if .Control}}<p class="notes">{{.Control}}</p>{{end}}
{{if .Details}}<details><summary>Decisions in detail</summary><ul class="notes">{{range .Details}}<li>{{.}}</li>{{end}}</ul></details>{{end}}
{{end}}
<h2>Answers</h2>
{{if .Answers}}<ul>{{range .Answers}}<li><strong>{{.Metric}}</strong>: {{.Text}}</li>{{end}}</ul>
<p class="notes">{{.AnswerNote}}</p>{{else if .AnswerNote}}<p>{{.AnswerNote}}</p>{{else}}<p>Nothing to compare: fewer than two configurations have valid repetitions.</p>{{end}}
{{with .Mechanisms}}
<h2>Mechanisms</h2>
{{if .NotCounted}}<p>{{.NotCounted}}.</p>{{else}}<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<p class="notes">{{.Note}}</p>{{end}}
{{end}}

<h2>Summary</h2>{{with .SummaryLevel}}<p>{{.}}</p>{{end}}
{{if .Load}}<p>Costs per request at {{.Load}}.</p>{{end}}
<table>
<tr>{{range .SummaryHead}}<th>{{.}}</th>{{end}}</tr>
{{range .SummaryRows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{range .SummaryNotes}}<p class="notes">{{.}}</p>{{end}}
{{if .StatNotes}}<p class="notes">Statistics warnings:</p><ul class="notes">{{range .StatNotes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{with .Orders}}
<h2>Promotion orders</h2>
<p>Leader/Followers' promotion orders compared at {{.Load}}.</p>
{{range .Groups}}<h3>{{.Name}}</h3>
<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{range .Verdicts}}<p>{{plain .}}</p>{{end}}
{{end}}{{range .Notes}}<p class="notes">{{.}}</p>{{end}}
{{end}}
{{with .Claims}}
<h2>Claims</h2>
<p>The patterns' claims about per-request costs, tested at {{.Load}}:</p>
<ul>{{range .Claims}}<li>{{plain .}}</li>{{end}}</ul>
{{if .Rows}}<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{plain .}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{range .Notes}}<p class="notes">{{.}}</p>{{end}}
{{end}}{{with .Balance}}
<h2>Connection balance</h2>
<p>How evenly each configuration's connections and requests spread over the threads that serve them, at {{.Load}}.</p>
{{range .Tables}}{{if .Name}}<h3>{{.Name}}</h3>{{end}}
<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{range .Notes}}<p class="notes">{{.}}</p>{{end}}
{{end}}{{with .Nginx}}
<h2>nginx beside its model</h2>
<p>The nginx-style model and real nginx in each accept mode, at {{.Load}}.</p>
<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<ul>{{range .Verdicts}}<li>{{plain .}}</li>{{end}}</ul>
{{range .Notes}}<p class="notes">{{.}}</p>{{end}}
{{end}}

<h2>Figures</h2>
{{range .Figures}}<figure id="{{.Name}}">
<h3>{{.Title}}</h3>
<img alt="{{.Title}}" src="{{svg .SVG}}">
<figcaption>{{.Caption}}
{{if .Notes}}<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
</figcaption>
</figure>
{{end}}{{if .Omitted}}<ul>{{range .Omitted}}<li>{{.}}</li>{{end}}</ul>{{end}}

{{with .Chain}}<h2>Measurement chain</h2>
<p><strong>{{.Verdict}}.</strong></p>
{{if .Reasons}}<ul>{{range .Reasons}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Rows}}<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<p class="notes">{{.Floor}}</p>
<ul class="notes">{{range .Decomp}}<li>{{.}}</li>{{end}}{{range .Notes}}<li>{{.}}</li>{{end}}</ul>
<p>Details: <a href="{{.Link}}">{{.Link}}</a>.</p>{{end}}
{{end}}
<h2>Experiment</h2>
<table>
<tr><th>configuration</th><th>model</th><th>arguments</th><th>threads</th></tr>
{{range .Configs}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{if .Workload}}<table>
<tr><th>workload</th><th></th></tr>
{{range .Workload}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Experiment}}<details><summary>Full experiment configuration</summary><pre>{{.Experiment}}</pre></details>{{end}}

<h2>Provenance</h2>
<table>
{{range .Provenance}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}</table>

<h2>Validity</h2>
{{if .Unavailable}}<p>Unavailable on this machine:</p>
<ul>{{range .Unavailable}}<li><strong>{{.Label}}</strong>: {{join .Reasons "; "}}</li>{{end}}</ul>{{end}}
{{if .ValidityRows}}<p>Valid repetitions per configuration and load (valid/total; where some are not valid, the most frequent main reason among them). Only valid repetitions enter the statistics, figures and bench.txt.</p>
<table>
<tr>{{range .ValidityHead}}<th>{{.}}</th>{{end}}</tr>
{{range .ValidityRows}}<tr>{{range $i, $c := .}}{{if $i}}<td>{{$c}}</td>{{else}}<th>{{$c}}</th>{{end}}{{end}}</tr>
{{end}}</table>
{{if .ValidityLegend}}<p class="notes">{{range $i, $l := .ValidityLegend}}{{if $i}} {{end}}<code>{{$l.Code}}</code>: {{$l.Meaning}}.{{end}}</p>{{end}}{{end}}
{{if or .Failed .Invalid}}<details><summary>Every point that is not valid, with its reasons ({{len .Failed}} failed, {{len .Invalid}} invalid)</summary>
{{if .Failed}}<p>Failed points (not in any statistic):</p>
<ul>{{range .Failed}}<li><strong>{{.Label}}</strong>:{{range .Reasons}}<pre>{{.}}</pre>{{end}}</li>{{end}}</ul>{{end}}
{{if .Invalid}}<p>Points with an invalid load-generator verdict (excluded from every statistic; [code] names the failed check):</p>
<ul>{{range .Invalid}}<li><strong>{{.Label}}</strong>: {{join .Reasons "; "}}</li>{{end}}</ul>{{end}}
</details>{{end}}
{{if not (or .Unavailable .Failed .Invalid)}}<p>Every point was measured and every verdict is valid.</p>{{end}}
{{if .Warnings}}<p>Run warnings:</p><ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .ServerErrors}}<p>Errors the servers counted over the measured windows (see the models' documentation for each kind; "refused": connections turned away at a model's limit):</p><ul>{{range .ServerErrors}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .PointWarns}}<p>Warnings on points:</p><ul>{{range .PointWarns}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .LoadWarns}}<p>{{.LoadWarns}}</p>{{end}}
</body>
</html>
`))

// writeHTML writes report.html: the same content as report.md, every
// figure embedded as a base64 SVG data URI, no external assets.
func (rep *report) writeHTML(w io.Writer) error {
	if err := htmlTemplate.Execute(w, rep); err != nil {
		return fmt.Errorf("report: report.html: %w", err)
	}
	return nil
}
