package main

import "io"

func beats(o options, out, log io.Writer) error         { return nil }
func holders(o options, out, log io.Writer) error       { return nil }
func holdersChild(o options, out io.Writer) error       { return nil }
func pushFanout(o options, out, log io.Writer) error    { return nil }
func listeners(o options, out, log io.Writer) error     { return nil }
