/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tdispatch

#if !defined(_TDISPATCH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TDISPATCH_TRACE_H

#include <linux/tracepoint.h>

#include "dispatch.h"
#include "internal.h"

/* A fixed array rather than __string(): __assign_str() changed in 6.10. */
#define TD_TRACE_NAME(d)	memcpy(__entry->name, (d)->name, TD_NAME_LEN)

TRACE_EVENT(tdispatch_submit,
	    TP_PROTO(const struct tdispatch *d, u64 id),
	    TP_ARGS(d, id),
	    TP_STRUCT__entry(__array(char, name, TD_NAME_LEN)
			     __field(u64, id)),
	    TP_fast_assign(TD_TRACE_NAME(d);
			   __entry->id = id;),
	    TP_printk("%s id=%llu", __entry->name, __entry->id)
);

TRACE_EVENT(tdispatch_coalesce,
	    TP_PROTO(const struct tdispatch *d, const struct tdispatch_task *t),
	    TP_ARGS(d, t),
	    TP_STRUCT__entry(__array(char, name, TD_NAME_LEN)
			     __field(u64, id)
			     __field(unsigned int, attempts)),
	    TP_fast_assign(TD_TRACE_NAME(d);
			   __entry->id = t->id;
			   __entry->attempts = t->attempts;),
	    TP_printk("%s id=%llu attempts=%u", __entry->name, __entry->id,
		      __entry->attempts)
);

TRACE_EVENT(tdispatch_drop,
	    TP_PROTO(const struct tdispatch *d, const struct tdispatch_task *t,
		     enum tdispatch_outcome reason),
	    TP_ARGS(d, t, reason),
	    TP_STRUCT__entry(__array(char, name, TD_NAME_LEN)
			     __field(u64, id)
			     __field(unsigned int, attempts)
			     __field(int, reason)),
	    TP_fast_assign(TD_TRACE_NAME(d);
			   __entry->id = t->id;
			   __entry->attempts = t->attempts;
			   __entry->reason = reason;),
	    TP_printk("%s id=%llu attempts=%u reason=%s", __entry->name,
		      __entry->id, __entry->attempts,
		      __print_symbolic(__entry->reason,
				       { TDISPATCH_OUTCOME_FAILED, "failed" },
				       { TDISPATCH_OUTCOME_EXPIRED, "expired" },
				       { TDISPATCH_OUTCOME_DROPPED, "overflow" },
				       { TDISPATCH_OUTCOME_CANCELLED, "cancelled" },
				       { TDISPATCH_OUTCOME_EXHAUSTED, "exhausted" }))
);

TRACE_EVENT(tdispatch_batch_start,
	    TP_PROTO(const struct tdispatch *d, const struct tdispatch_batch *b),
	    TP_ARGS(d, b),
	    TP_STRUCT__entry(__array(char, name, TD_NAME_LEN)
			     __field(unsigned int, nr)
			     __field(u64, first_id)),
	    TP_fast_assign(TD_TRACE_NAME(d);
			   __entry->nr = b->nr;
			   __entry->first_id = b->tasks[0]->id;),
	    TP_printk("%s nr=%u first_id=%llu", __entry->name, __entry->nr,
		      __entry->first_id)
);

TRACE_EVENT(tdispatch_batch_end,
	    TP_PROTO(const struct tdispatch *d, const struct tdispatch_batch *b,
		     enum tdispatch_result result),
	    TP_ARGS(d, b, result),
	    TP_STRUCT__entry(__array(char, name, TD_NAME_LEN)
			     __field(unsigned int, nr)
			     __field(int, result)),
	    TP_fast_assign(TD_TRACE_NAME(d);
			   __entry->nr = b->nr;
			   __entry->result = result;),
	    TP_printk("%s nr=%u result=%s", __entry->name, __entry->nr,
		      __print_symbolic(__entry->result,
				       { TDISPATCH_RESULT_SUCCESS, "success" },
				       { TDISPATCH_RESULT_CONGESTION, "congestion" },
				       { TDISPATCH_RESULT_TRANSIENT, "transient" },
				       { TDISPATCH_RESULT_PERMANENT, "permanent" },
				       { TD_RESULT_REDELIVER, "redeliver" }))
);

TRACE_EVENT(tdispatch_holdoff,
	    TP_PROTO(const struct tdispatch *d, u64 delay_ns),
	    TP_ARGS(d, delay_ns),
	    TP_STRUCT__entry(__array(char, name, TD_NAME_LEN)
			     __field(u64, delay_ns)),
	    TP_fast_assign(TD_TRACE_NAME(d);
			   __entry->delay_ns = delay_ns;),
	    TP_printk("%s delay_ns=%llu", __entry->name, __entry->delay_ns)
);

#endif /* _TDISPATCH_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
