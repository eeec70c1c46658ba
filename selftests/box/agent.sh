#!/bin/bash
# The box suite's agent inside the box (installed by the suite, never by the
# package): runs each command that comes over the virtio port
# sluice.agent ("ID<TAB>base64 of a bash script"), answers "ID<TAB>status
# <TAB>base64 of its output". One at a time; a command that must outlive
# its answer starts itself in the background (systemd-run, setsid).
# (the port by its name: without udev, as in the ISP's guest, there is no
# /dev/virtio-ports link)
port=/dev/virtio-ports/sluice.agent
for d in /sys/class/virtio-ports/*; do
	[ ! -e "$port" ] && [ "$(cat "$d/name" 2>/dev/null)" = sluice.agent ] && port=/dev/${d##*/}
done
while :; do
	if ! exec 3<>"$port"; then
		sleep 1
		continue
	fi
	while IFS=$'\t' read -r id cmd <&3; do
		printf '%s' "$cmd" | base64 -d >/run/sluice-box-agent.cmd
		# (not fd 3: a command's background job must not hold the port,
		# which opens once at a time)
		out=$(timeout 900 bash /run/sluice-box-agent.cmd 2>&1 </dev/null 3>&-)
		rc=$?
		printf '%s\t%s\t%s\n' "$id" "$rc" "$(printf '%s' "$out" | base64 -w0)" >&3
	done
	exec 3>&-
	sleep 0.2
done
