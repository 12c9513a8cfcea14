/* Device facts from /proc/driver/nvidia (see nvidia-proc.h). The driver writes
 *   version:                  "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  ..."
 *   gpus/<bus>/information:   "GPU UUID: \t GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" and
 *                             "Bus Location: \t 0000:18:00.0" */
#include "nvidia-proc.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

static void read_version(const char *root, char *version, size_t size)
{
	char path[4096], line[512];
	version[0] = '\0';
	snprintf(path, sizeof(path), "%s/version", root);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "Kernel Module");
		if (p) {
			p += strlen("Kernel Module");
			p += strspn(p, " \t");
			size_t n = strcspn(p, " \t\n");
			if (n >= size)
				n = size - 1;
			memcpy(version, p, n);
			version[n] = '\0';
		}
	}
	fclose(f);
}

/* The value after "Key:" on a line, whitespace trimmed, or NULL. */
static char *value_of(char *line, const char *key)
{
	size_t n = strlen(key);
	if (strncmp(line, key, n) || line[n] != ':')
		return NULL;
	char *v = line + n + 1;
	v += strspn(v, " \t");
	v[strcspn(v, "\r\n")] = '\0';
	return v;
}

void nvidia_proc_describe(const char *root, struct record_agent *agent, char *version,
			  size_t version_size)
{
	read_version(root, version, version_size);
	const uint8_t *u = agent->uuid;
	char uuid[64];
	snprintf(uuid, sizeof(uuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
	char path[4096];
	snprintf(path, sizeof(path), "%s/gpus", root);
	DIR *dir = opendir(path);
	if (!dir)
		return;
	struct dirent *entry;
	while ((entry = readdir(dir))) {
		if (entry->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/gpus/%s/information", root, entry->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		char line[512], bus[128] = "";
		int match = 0;
		while (fgets(line, sizeof(line), f)) {
			char *v;
			if ((v = value_of(line, "GPU UUID")))
				match = !strcasecmp(v, uuid);
			else if ((v = value_of(line, "Bus Location")))
				snprintf(bus, sizeof(bus), "%s", v);
		}
		fclose(f);
		unsigned domain, b, device, function;
		if (match && sscanf(bus, "%x:%x:%x.%x", &domain, &b, &device, &function) == 4) {
			agent->pci_domain = domain;
			agent->pci_bus = b;
			agent->pci_device = device;
			agent->pci_function = function;
			break;
		}
	}
	closedir(dir);
}
