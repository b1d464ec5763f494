// Package aarate measures how often the who-wins table is wrong: it runs
// an experiment with an A/A twin (a configuration measured again under
// another name) again and again, decides every run's table with this
// binary's rules, and counts per column the cells that separated the twin
// from its original, with Clopper–Pearson intervals. Each run leaves a
// Record, so that it can be judged again after its folder is gone. The
// method is in "concbench help aarate" and docs/usage.md ("aarate").
package aarate
