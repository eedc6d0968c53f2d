package grpo

import "fmt"

// newServedTeacher returns the teacher of teacher_urls.
func newServedTeacher(cfg Config) (Teacher, error) {
	return nil, fmt.Errorf("grpo: config teacher_engine %s: not supported yet", cfg.TeacherEngine)
}
