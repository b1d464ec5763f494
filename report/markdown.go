package report

import (
	"fmt"
	"io"
	"strings"
	"text/template"
)

// mdCell escapes a table cell for Markdown.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", "").Replace(s)
}

// mdIndent indents every line after the first, for a list item.
func mdIndent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

var funcs = map[string]any{
	"cell":   mdCell,
	"indent": mdIndent,
	"join":   strings.Join,
	"multiline": func(s string) bool {
		return strings.Contains(s, "\n")
	},
	"sep":  func(n int) string { return strings.Repeat("|---", n) + "|" },
	"base": func(p string) string { return p[strings.LastIndex(p, "/")+1:] },
}

var mdTemplate = template.Must(template.New("report.md").Funcs(funcs).Parse(`# concbench run {{.Run.ID}}
{{if .Banner}}
> **{{.Banner}}**
{{end}}{{if .Partial}}
> **Partial run:** {{.Partial}}.
{{end}}
{{.Counts}}.
{{with .Winners}}
## Who wins where

{{.Markdown}}{{end}}
## Answers
{{if .Answers}}{{range .Answers}}
- **{{.Metric}}**: {{.Text}}{{end}}

{{.AnswerNote}}
{{else if .AnswerNote}}
{{.AnswerNote}}
{{else}}
Nothing to compare: fewer than two configurations have valid repetitions.
{{end}}{{with .Mechanisms}}
## Mechanisms

{{.Markdown}}{{end}}
## Summary
{{with .SummaryLevel}}
{{.}}
{{end}}{{if .Load}}
Costs per request at {{.Load}}.
{{end}}
|{{range .SummaryHead}} {{cell .}} |{{end}}
{{sep (len .SummaryHead)}}
{{range .SummaryRows}}|{{range .}} {{cell .}} |{{end}}
{{end}}{{range .SummaryNotes}}
{{.}}
{{end}}{{if .StatNotes}}
Statistics warnings:
{{range .StatNotes}}
- {{.}}{{end}}
{{end}}{{with .Orders}}
## Promotion orders

{{.Markdown}}{{end}}{{with .Claims}}
## Claims

{{.Markdown}}{{end}}{{with .Balance}}
## Connection balance

{{.Markdown}}{{end}}{{with .Nginx}}
## nginx beside its model

{{.Markdown}}{{end}}
## Figures
{{range .Figures}}
### {{.Title}}

{{if .Image}}![{{.Title}}]({{.Image}})

{{end}}{{.Caption}}
{{range .Notes}}
- {{.}}{{end}}

Files: {{range $i, $f := .Files}}{{if $i}}, {{end}}[{{base $f}}]({{$f}}){{end}}; data: [{{base .CSV}}]({{.CSV}}).
{{end}}{{range .Omitted}}
- {{.}}{{end}}
{{with .Chain}}
## Measurement chain

**{{.Verdict}}.**
{{range .Reasons}}
- {{.}}{{end}}
{{if .Rows}}
|{{range .Head}} {{cell .}} |{{end}}
{{sep (len .Head)}}
{{range .Rows}}|{{range .}} {{cell .}} |{{end}}
{{end}}
{{.Floor}}
{{range .Decomp}}
- {{.}}{{end}}
{{range .Notes}}
- {{.}}{{end}}

Details: [{{.Link}}]({{.Link}}).
{{end}}{{end}}
## Experiment

| configuration | model | arguments | threads |
|---|---|---|---|
{{range .Configs}}| {{cell (index . 0)}} | {{cell (index . 1)}} | {{cell (index . 2)}} | {{cell (index . 3)}} |
{{end}}{{if .Workload}}
| workload | |
|---|---|
{{range .Workload}}| {{cell (index . 0)}} | {{cell (index . 1)}} |
{{end}}{{end}}{{if .Experiment}}
<details><summary>Full experiment configuration</summary>

` + "```json" + `
{{.Experiment}}
` + "```" + `

</details>
{{end}}
## Provenance

| | |
|---|---|
{{range .Provenance}}| {{cell (index . 0)}} | {{cell (index . 1)}} |
{{end}}
## Validity
{{if .Unavailable}}
Unavailable on this machine:
{{range .Unavailable}}
- **{{.Label}}**: {{join .Reasons "; "}}{{end}}
{{end}}{{if .ValidityRows}}
Valid repetitions per configuration and load (valid/total; where some are not valid, the most frequent main reason among them). Only valid repetitions enter the statistics, figures and bench.txt.

|{{range .ValidityHead}} {{cell .}} |{{end}}
{{sep (len .ValidityHead)}}
{{range .ValidityRows}}|{{range .}} {{cell .}} |{{end}}
{{end}}{{if .ValidityLegend}}
{{range $i, $l := .ValidityLegend}}{{if $i}} {{end}}` + "`{{$l.Code}}`" + `: {{$l.Meaning}}.{{end}}
{{end}}{{end}}{{if or .Failed .Invalid}}
<details><summary>Every point that is not valid, with its reasons ({{len .Failed}} failed, {{len .Invalid}} invalid)</summary>
{{if .Failed}}
Failed points (not in any statistic):
{{range .Failed}}
- **{{.Label}}**:{{range .Reasons}}{{if multiline .}}

    ` + "```" + `
    {{indent .}}
    ` + "```" + `{{else}} {{.}}{{end}}{{end}}{{end}}
{{end}}{{if .Invalid}}
Points with an invalid load-generator verdict (excluded from every statistic; [code] names the failed check):
{{range .Invalid}}
- **{{.Label}}**: {{join .Reasons "; "}}{{end}}
{{end}}
</details>
{{end}}{{if not (or .Unavailable .Failed .Invalid)}}
Every point was measured and every verdict is valid.
{{end}}{{if .Warnings}}
Run warnings:
{{range .Warnings}}
- {{.}}{{end}}
{{end}}{{if .ServerErrors}}
Errors the servers counted over the measured windows (see the models' documentation for each kind; "refused": connections turned away at a model's limit):
{{range .ServerErrors}}
- {{.}}{{end}}
{{end}}{{if .PointWarns}}
Warnings on points:
{{range .PointWarns}}
- {{.}}{{end}}
{{end}}{{if .LoadWarns}}
{{.LoadWarns}}
{{end}}
`))

// writeMarkdown writes report.md.
func (rep *report) writeMarkdown(w io.Writer) error {
	if err := mdTemplate.Execute(w, rep); err != nil {
		return fmt.Errorf("report: report.md: %w", err)
	}
	return nil
}
