// Package tty tells whether a file is a terminal, for the commands of this
// module (colour on a terminal, line editing): a terminal is what answers
// the terminal ioctl, not any character device (/dev/null is one).
package tty
