/* SPDX-License-Identifier: MIT */
/* NVMe status names (NVM Express Base 2.0 figures 100-105, NVM Command Set, Fabrics). */
#include <stdio.h>

#include "common/endian.h"
#include "common/nvme_auth_spec.h"
#include "host_internal.h"

struct status_name {
	uint8_t sc;
	const char *name;
};

static const struct status_name generic_names[] = {
	{ NVME_SC_SUCCESS, "Successful Completion" },
	{ NVME_SC_INVALID_OPCODE, "Invalid Command Opcode" },
	{ NVME_SC_INVALID_FIELD, "Invalid Field in Command" },
	{ NVME_SC_CID_CONFLICT, "Command ID Conflict" },
	{ NVME_SC_DATA_TRANSFER_ERROR, "Data Transfer Error" },
	{ NVME_SC_ABORTED_POWER_LOSS, "Commands Aborted due to Power Loss Notification" },
	{ NVME_SC_INTERNAL, "Internal Error" },
	{ NVME_SC_ABORT_REQUESTED, "Command Abort Requested" },
	{ NVME_SC_ABORTED_SQ_DELETION, "Command Aborted due to SQ Deletion" },
	{ NVME_SC_ABORTED_FAILED_FUSED, "Command Aborted due to Failed Fused Command" },
	{ NVME_SC_ABORTED_MISSING_FUSED, "Command Aborted due to Missing Fused Command" },
	{ NVME_SC_INVALID_NS_OR_FORMAT, "Invalid Namespace or Format" },
	{ NVME_SC_COMMAND_SEQUENCE_ERROR, "Command Sequence Error" },
	{ NVME_SC_INVALID_SGL_SEG_DESC, "Invalid SGL Segment Descriptor" },
	{ NVME_SC_INVALID_NUM_SGL_DESC, "Invalid Number of SGL Descriptors" },
	{ NVME_SC_DATA_SGL_LENGTH_INVALID, "Data SGL Length Invalid" },
	{ NVME_SC_METADATA_SGL_LENGTH_INVALID, "Metadata SGL Length Invalid" },
	{ NVME_SC_SGL_DESC_TYPE_INVALID, "SGL Descriptor Type Invalid" },
	{ NVME_SC_INVALID_CMB_USE, "Invalid Use of Controller Memory Buffer" },
	{ NVME_SC_INVALID_PRP_OFFSET, "PRP Offset Invalid" },
	{ NVME_SC_ATOMIC_WRITE_UNIT_EXCEEDED, "Atomic Write Unit Exceeded" },
	{ NVME_SC_OPERATION_DENIED, "Operation Denied" },
	{ NVME_SC_INVALID_SGL_OFFSET, "SGL Offset Invalid" },
	{ NVME_SC_HOSTID_INCONSISTENT_FORMAT, "Host Identifier Inconsistent Format" },
	{ NVME_SC_KEEP_ALIVE_EXPIRED, "Keep Alive Timer Expired" },
	{ NVME_SC_KEEP_ALIVE_INVALID, "Keep Alive Timeout Invalid" },
	{ NVME_SC_ABORTED_PREEMPT, "Command Aborted due to Preempt and Abort" },
	{ NVME_SC_SANITIZE_FAILED, "Sanitize Failed" },
	{ NVME_SC_SANITIZE_IN_PROGRESS, "Sanitize In Progress" },
	{ NVME_SC_SGL_DATA_BLOCK_GRANULARITY_INVALID, "SGL Data Block Granularity Invalid" },
	{ NVME_SC_NS_WRITE_PROTECTED, "Namespace is Write Protected" },
	{ NVME_SC_COMMAND_INTERRUPTED, "Command Interrupted" },
	{ NVME_SC_TRANSIENT_TRANSPORT_ERROR, "Transient Transport Error" },
	{ NVME_SC_LBA_OUT_OF_RANGE, "LBA Out of Range" },
	{ NVME_SC_CAPACITY_EXCEEDED, "Capacity Exceeded" },
	{ NVME_SC_NS_NOT_READY, "Namespace Not Ready" },
	{ NVME_SC_RESERVATION_CONFLICT, "Reservation Conflict" },
	{ NVME_SC_FORMAT_IN_PROGRESS, "Format In Progress" },
};

/* Admin command specific (SC < 80h) and NVM command set specific (SC >= 80h). */
static const struct status_name cmd_specific_names[] = {
	{ NVME_SC_COMPLETION_QUEUE_INVALID, "Completion Queue Invalid" },
	{ NVME_SC_INVALID_QUEUE_IDENTIFIER, "Invalid Queue Identifier" },
	{ NVME_SC_INVALID_QUEUE_SIZE, "Invalid Queue Size" },
	{ NVME_SC_ABORT_COMMAND_LIMIT_EXCEEDED, "Abort Command Limit Exceeded" },
	{ NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED, "Asynchronous Event Request Limit Exceeded" },
	{ NVME_SC_INVALID_FIRMWARE_SLOT, "Invalid Firmware Slot" },
	{ NVME_SC_INVALID_FIRMWARE_IMAGE, "Invalid Firmware Image" },
	{ NVME_SC_INVALID_LOG_PAGE, "Invalid Log Page" },
	{ NVME_SC_INVALID_FORMAT, "Invalid Format" },
	{ NVME_SC_FEATURE_ID_NOT_SAVEABLE, "Feature Identifier Not Saveable" },
	{ NVME_SC_FEATURE_NOT_CHANGEABLE, "Feature Not Changeable" },
	{ NVME_SC_FEATURE_NOT_NAMESPACE_SPECIFIC, "Feature Not Namespace Specific" },
	{ NVME_SC_CONFLICTING_ATTRIBUTES, "Conflicting Attributes" },
	{ NVME_SC_INVALID_PROTECTION_INFO, "Invalid Protection Information" },
	{ NVME_SC_ATTEMPTED_WRITE_TO_RO_RANGE, "Attempted Write to Read Only Range" },
};

static const struct status_name connect_names[] = {
	{ NVME_SC_CONNECT_INCOMPATIBLE_FORMAT, "Incompatible Format" },
	{ NVME_SC_CONNECT_CONTROLLER_BUSY, "Controller Busy" },
	{ NVME_SC_CONNECT_INVALID_PARAMETERS, "Connect Invalid Parameters" },
	{ NVME_SC_CONNECT_RESTART_DISCOVERY, "Connect Restart Discovery" },
	{ NVME_SC_CONNECT_INVALID_HOST, "Connect Invalid Host" },
	{ NVME_SC_INVALID_QUEUE_TYPE, "Invalid Queue Type" },
	{ NVMF_SC_AUTH_REQUIRED, "Authentication Required" },
};

static const struct status_name media_names[] = {
	{ NVME_SC_WRITE_FAULT, "Write Fault" },
	{ NVME_SC_UNRECOVERED_READ_ERROR, "Unrecovered Read Error" },
	{ NVME_SC_GUARD_CHECK_ERROR, "End-to-end Guard Check Error" },
	{ NVME_SC_APPTAG_CHECK_ERROR, "End-to-end Application Tag Check Error" },
	{ NVME_SC_REFTAG_CHECK_ERROR, "End-to-end Reference Tag Check Error" },
	{ NVME_SC_COMPARE_FAILURE, "Compare Failure" },
	{ NVME_SC_ACCESS_DENIED, "Access Denied" },
	{ NVME_SC_DEALLOCATED_OR_UNWRITTEN, "Deallocated or Unwritten Logical Block" },
};

static const struct status_name path_names[] = {
	{ 0x00, "Internal Path Error" },
	{ 0x01, "Asymmetric Access Persistent Loss" },
	{ 0x02, "Asymmetric Access Inaccessible" },
	{ 0x03, "Asymmetric Access Transition" },
	{ 0x60, "Controller Pathing Error" },
	{ 0x70, "Host Pathing Error" },
	{ 0x71, "Command Aborted By Host" },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *lookup(const struct status_name *t, size_t n, uint8_t sc)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].sc == sc)
			return t[i].name;
	return NULL;
}

const char *nvmeof_status_name(uint16_t status)
{
	uint8_t sc = NVMEOF_SC(status);
	const char *name = NULL;

	switch (NVMEOF_SCT(status)) {
	case NVME_SCT_GENERIC:
		name = lookup(generic_names, N(generic_names), sc);
		break;
	case NVME_SCT_COMMAND_SPECIFIC:
		name = lookup(cmd_specific_names, N(cmd_specific_names), sc);
		break;
	case NVME_SCT_MEDIA:
		name = lookup(media_names, N(media_names), sc);
		break;
	case NVME_SCT_PATH:
		name = lookup(path_names, N(path_names), sc);
		break;
	case NVME_SCT_VENDOR:
		return "Vendor Specific";
	}
	return name ? name : "Unknown Status";
}

const char *connect_status_name(uint16_t status)
{
	const char *name = NULL;

	if (NVMEOF_SCT(status) == NVME_SCT_COMMAND_SPECIFIC)
		name = lookup(connect_names, N(connect_names), NVMEOF_SC(status));
	return name ? name : nvmeof_status_name(status);
}

char *nvmeof_status_str(uint16_t status, char *buf, size_t len)
{
	snprintf(buf, len, "%s (sct %u sc 0x%02x)", nvmeof_status_name(status),
		 NVMEOF_SCT(status), NVMEOF_SC(status));
	return buf;
}

uint16_t cqe_status(const struct nvme_cpl *cqe)
{
	uint16_t st = get_le16(&cqe->status);

	return NVMEOF_STATUS(NVME_STATUS_SCT(st), NVME_STATUS_SC(st));
}

/* AUTH_Failure1/2 reason code explanations (Base 2.0 figure 452). */
static const struct status_name auth_failure_names[] = {
	{ NVME_AUTH_FAIL_FAILED, "authentication failed" },
	{ NVME_AUTH_FAIL_PROTOCOL_UNUSABLE, "authentication protocol not usable" },
	{ NVME_AUTH_FAIL_CONCAT_MISMATCH, "secure channel concatenation mismatch" },
	{ NVME_AUTH_FAIL_HASH_UNUSABLE, "hash function not usable" },
	{ NVME_AUTH_FAIL_DHGROUP_UNUSABLE, "DH group not usable" },
	{ NVME_AUTH_FAIL_INCORRECT_PAYLOAD, "incorrect payload" },
	{ NVME_AUTH_FAIL_INCORRECT_MESSAGE, "incorrect protocol message" },
};

const char *auth_failure_name(uint8_t explanation)
{
	const char *name = lookup(auth_failure_names, N(auth_failure_names), explanation);

	return name ? name : "unknown reason";
}
