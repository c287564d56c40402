import { ApiError } from '../../errors';
import { defineHandler } from '../../http/define-handler';

/** getPetById: GET /pets/{petId} (deprecated). A pet is known while an order that has not been cancelled refers to it. */
export const getPetById = defineHandler('v1', 'getPetById', ({ store }) => async ({ path }) => {
  const id = path.petId;
  if (!(await store.petExists(id))) throw new ApiError('pet_not_found', `Pet ${id} was not found`);
  return { status: 200, body: { id } };
});
