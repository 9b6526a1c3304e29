#!/bin/sh
# An ACP agent for logs_e2e_test.sh that closes its stdin at once and exits a second later: the
# daemon's first write to it (initialize) meets a closed pipe.
exec 0<&-
sleep 1
