#!/bin/sh
date +%F > report.txt
