// Package fileinfo holds the two facts about files that skillgate's
// readers of hostile trees ask the platform for: how many names (hard
// links) a file has, and the open flag that keeps a FIFO swapped in for a
// regular file from blocking the open.
package fileinfo
