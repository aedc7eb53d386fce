# driverdom/: the agent that runs inside each driver domain.
AGENT_SRCS := driverdom/agent.c driverdom/supervisor.c
$(BIN)/understudy-agent: $(AGENT_SRCS:%.c=$(OBJ)/%.o) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -lxenstore
ALL_TARGETS += $(BIN)/understudy-agent
