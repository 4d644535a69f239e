// Package compat holds the Nacos 1.x wire formats nacosd must reproduce byte for
// byte: Jackson-style JSON output (key order, Java number formatting, Java string
// escaping), the error bodies of Java Nacos 1.4.8, and the small Java algorithms
// clients depend on (String.hashCode, Double.toString, java.util.regex as
// a client's service filter is matched). It is pure: no I/O, no
// clocks, and every shape is golden-tested.
package compat
