// Package fileinfo holds the facts about files that skillgate's readers
// of hostile trees ask the platform for: how many names (hard links) a
// file has, and the open flags that keep a FIFO swapped in for a regular
// file from blocking the open and a link from being followed; and the one
// bounded read of a regular file built on them.
package fileinfo
