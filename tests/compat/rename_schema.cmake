# Copies a released event schema into a namespace of its own (-DIN=... -DOUT=... -DNS=...),
# so that code generated from it can sit beside the current schema's in one program: a
# reader exactly as a plugin or relay built against that release has it.
file(READ ${IN} schema)
string(REPLACE "namespace arbiter.fb;" "namespace ${NS};" schema "${schema}")
if(NOT schema MATCHES "namespace ${NS};")
  message(FATAL_ERROR "no namespace arbiter.fb in ${IN}")
endif()
file(WRITE ${OUT} "${schema}")
