// Package figures renders a run folder from its stored results only
// (concbench figures): the figures, the exports and the report, and says
// where they are. Screenshot takes the report's picture for a quick look.
package figures
