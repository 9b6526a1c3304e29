#!/bin/sh
# A misbehaving stand-in for the `claude` CLI, for the fault tests (claude_faults_test.cc). It
# ignores its arguments, answers the initialize control request, then plays the fault named in
# each prompt:
#   garbage-then-result   a non-JSON line, an oversize line, a delta with invalid UTF-8, a result
#   garbage-then-silence  a non-JSON line, then nothing (a hung CLI)
#   ignore-interrupt      starts a turn, then ignores the interrupt request, SIGINT and SIGTERM
trap '' INT TERM
while IFS= read -r line; do
  case "$line" in
    *'"type":"user"'*)
      # Replay the prompt as the real CLI does with --replay-user-messages.
      uuid=$(printf '%s' "$line" | sed -n 's/.*"uuid":"\([^"]*\)".*/\1/p')
      printf '{"type":"user","message":{"role":"user","content":"replayed"},"uuid":"%s","isReplay":true}\n' "$uuid";;
  esac
  case "$line" in
    *'"subtype":"initialize"'*)
      id=$(printf '%s' "$line" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
      printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{"commands":[{"name":"fake","description":"d"},{"name":5},{"description":"no name"},{"name":"x","description":7}],"models":[{"value":9},{"value":"m","displayName":[]}]}}}\n' "$id";;
    *garbage-then-result*)
      printf '{"type":"system","subtype":"init","session_id":"fake","model":"fake-model","permissionMode":"default"}\n'
      echo 'this is not json'
      head -c 5000 /dev/zero | tr '\0' x; echo
      printf '{"type":"stream_event","event":{"type":"message_start","message":{"id":"m_fake_1"}}}\n'
      printf '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"bad \377\376 bytes"}}}\n'
      printf '{"type":"stream_event","event":{"type":"message_stop"}}\n'
      printf '{"type":"result","subtype":"success","is_error":false,"result":"ok"}\n';;
    *garbage-then-silence*)
      printf '{"type":"system","subtype":"init","session_id":"fake","model":"fake-model","permissionMode":"default"}\n'
      echo '<<<garbage>>>';;
    *ignore-interrupt*)
      printf '{"type":"system","subtype":"init","session_id":"fake","model":"fake-model","permissionMode":"default"}\n'
      printf '{"type":"stream_event","event":{"type":"message_start","message":{"id":"m_fake_2"}}}\n'
      printf '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"working"}}}\n';;
  esac
done
